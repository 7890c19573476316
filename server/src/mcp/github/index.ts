/**
 * `github`: a simulation of the official GitHub MCP server over a local model of GitHub's data
 * (repositories, branches, files, commits, issues, pull requests, reviews). Predicates are pure reads of
 * the state described in schemas/servers/github.json.
 */
import { defineNamespace } from '../namespace.ts';
import * as p from './predicates.ts';
import { tools } from './tools.ts';
import { normalizeGithubState, type GithubState } from './state.ts';

export default defineNamespace<GithubState>({
  namespace: 'github',
  normalizeState: normalizeGithubState,
  predicates: {
    prMerged: p.prMerged,
    prOpen: p.prOpen,
    prClosed: p.prClosed,
    prExists: p.prExists,
    prHasReview: p.prHasReview,
    prHasLabel: p.prHasLabel,
    prHasComment: p.prHasComment,
    prReviewRequested: p.prReviewRequested,
    prCount: p.prCount,
    issueExists: p.issueExists,
    issueOpen: p.issueOpen,
    issueClosed: p.issueClosed,
    issueHasLabel: p.issueHasLabel,
    issueHasComment: p.issueHasComment,
    issueAssigned: p.issueAssigned,
    issueText: p.issueText,
    issueMilestone: p.issueMilestone,
    issueCount: p.issueCount,
    branchExists: p.branchExists,
    fileExists: p.fileExists,
    fileContains: p.fileContains,
    fileEquals: p.fileEquals,
    commitExists: p.commitExists,
  },
  tools,
});
