/**
 * `chat`: a simulated Slack-like workspace. The state is users and channels, each channel holding its
 * messages and thread replies (see schemas/servers/chat.json); predicates are pure reads of it.
 */
import { defineNamespace } from '../namespace.ts';
import * as p from './predicates.ts';
import { tools } from './tools.ts';
import { normalizeChatState, type ChatState } from './state.ts';

export default defineNamespace<ChatState>({
  namespace: 'chat',
  normalizeState: normalizeChatState,
  predicates: {
    channelExists: p.channelExists,
    channelTopic: p.channelTopic,
    userInChannel: p.userInChannel,
    messagePosted: p.messagePosted,
    threadReply: p.threadReply,
    reactionAdded: p.reactionAdded,
    messageExists: p.messageExists,
    messageCount: p.messageCount,
    mentionPosted: p.mentionPosted,
  },
  tools,
});
