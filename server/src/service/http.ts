/**
 * The submission service over HTTP (`mcpbench api`): Fastify, its routes made from schemas/openapi.yaml by
 * fastify-openapi-glue, every request (path, query, headers, body) and every response validated against the
 * same file with Ajv (JSON Schema 2020-12, as OpenAPI 3.1 has it), errors as RFC 9457 problem details
 * (`application/problem+json`, never a stack trace), rate limits per account (per address for public reads)
 * with the draft RateLimit-* headers.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import openapiGlue from '@platformatic/fastify-openapi-glue';
import responseValidation from '@fastify/response-validation';
import rateLimit from '@fastify/rate-limit';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { loadContract } from './contract.ts';
import { authenticate, createToken, listTokens, problemOf, requireScope, revokeToken, ServiceError, type Caller, type ProblemCode, type TokenScope } from './store.ts';
import type { SubmissionRequest, SubmissionService } from './submissions.ts';

export interface HttpOptions {
  /** Requests per minute per account or address (default 600). */
  rateLimit?: number;
  /** The package root the contract is read from. */
  root?: string;
  /** Fastify's logger (default off). */
  logger?: boolean;
}

const BODY_LIMIT = 64 * 1024;

function contractAjv(coerce: boolean): Ajv2020 {
  // addUsedSchema: false, so that two routes' schemas with the same `$id` (the glue's recursion anchors) do not clash.
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, addUsedSchema: false, useDefaults: true, coerceTypes: coerce ? 'array' : false });
  addFormats(ajv);
  return ajv;
}

/** Where in the request an Ajv error is, as the contract's `errors[].pointer` says it. */
function pointerOf(error: ErrorObject, context: string): string {
  const missing = error.keyword === 'required' ? `/${String((error.params as { missingProperty?: string }).missingProperty ?? '')}` : '';
  const extra = error.keyword === 'additionalProperties' ? `/${String((error.params as { additionalProperty?: string }).additionalProperty ?? '')}` : '';
  const path = `${error.instancePath}${missing}${extra}`;
  if (context === 'body') return path || '/';
  const name = path.split('/')[1] ?? '';
  return `${context === 'querystring' ? 'query' : context === 'params' ? 'path' : 'header'}/${name}`;
}

function sendProblem(reply: FastifyReply, request: FastifyRequest, code: ProblemCode, detail?: string, errors?: { pointer: string; detail: string }[]): FastifyReply {
  const problem = problemOf(code, detail, request.url.split('?')[0], errors);
  if (code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="mcpbench"');
  return reply.code(problem.status).type('application/problem+json').send(problem);
}

/** The contract's operations, each onto the service. */
function handlers(service: SubmissionService) {
  const auth = async (request: FastifyRequest, scope: TokenScope): Promise<Caller> => {
    const caller = await authenticate(service.db, request.headers.authorization);
    requireScope(caller, scope);
    return caller;
  };
  return {
    async createSubmission(request: FastifyRequest, reply: FastifyReply) {
      const caller = await auth(request, 'submissions');
      const key = request.headers['idempotency-key'];
      const { created, submission, endpointSecret } = await service.submit(caller, request.body as SubmissionRequest, typeof key === 'string' ? key : undefined);
      reply.header('location', `/submissions/${submission.id}`);
      return reply.code(created ? 202 : 200).send(endpointSecret ? { ...submission, endpoint_secret: endpointSecret } : submission);
    },
    async getSubmission(request: FastifyRequest<{ Params: { id: string } }>) {
      const caller = await auth(request, 'submissions');
      return service.get(caller, request.params.id);
    },
    async getLeaderboard(request: FastifyRequest<{ Querystring: { set?: string; month?: string } }>, reply: FastifyReply) {
      reply.header('cache-control', 'public, max-age=10');
      return service.leaderboard(request.query);
    },
    async listTasks(request: FastifyRequest<{ Querystring: { namespace?: string; category?: string; difficulty?: string; limit?: number; cursor?: string } }>) {
      return service.listTasks(request.query);
    },
    async getTask(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
      const { task, hash } = service.getTask(request.params.id);
      reply.header('etag', `"${hash}"`);
      return task;
    },
    async getRun(request: FastifyRequest<{ Params: { id: string } }>) {
      // Public when published; with a token, the owner's own too. A bad token is 401, not a silent anonymous read.
      const caller = request.headers.authorization === undefined ? undefined : await authenticate(service.db, request.headers.authorization);
      return service.getRun(request.params.id, caller);
    },
    async listTokens(request: FastifyRequest) {
      const caller = await auth(request, 'tokens');
      return { tokens: await listTokens(service.db, caller.account.account_id) };
    },
    async createToken(request: FastifyRequest<{ Body: { name: string; scopes: TokenScope[]; expires_at?: string } }>, reply: FastifyReply) {
      const caller = await auth(request, 'tokens');
      const wider = request.body.scopes.filter((s) => !caller.token.scopes.includes(s));
      if (wider.length) throw new ServiceError('insufficient-scope', `a token can only make tokens with its own scopes; it lacks ${wider.join(', ')}`);
      const made = await createToken(service.db, caller.account.account_id, request.body.name, request.body.scopes, request.body.expires_at);
      return reply.code(201).send(made);
    },
    async revokeToken(request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) {
      const caller = await auth(request, 'tokens');
      if (!(await revokeToken(service.db, caller.account.account_id, request.params.id))) throw new ServiceError('not-found');
      return reply.code(204).send();
    },
  };
}

/** The Fastify app of the service (not listening yet). */
export async function buildApp(service: SubmissionService, options: HttpOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: BODY_LIMIT, trustProxy: false, return503OnClosing: true });
  // The contract takes JSON bodies only: anything else is 415 (Fastify would parse text/plain too).
  app.removeContentTypeParser('text/plain');
  const requestAjv = contractAjv(true);
  const bodyAjv = contractAjv(false);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : requestAjv).compile(schema));
  app.setSchemaErrorFormatter((errors, dataVar) => {
    const error = new ServiceError('invalid-request', errors.map((e) => `${dataVar}${e.instancePath} ${e.message}`).join('; '), errors.map((e) => ({ pointer: pointerOf(e, dataVar), detail: e.message ?? 'is not valid' })));
    return error;
  });

  await app.register(rateLimit, {
    max: options.rateLimit ?? 600,
    timeWindow: 60_000,
    enableDraftSpec: true,
    keyGenerator: (request) => {
      // A token's id (never its secret) for an account's requests; the address for anonymous ones.
      const token = /^Bearer\s+mcpb_([0-9a-z]+)_/i.exec(request.headers.authorization ?? '');
      return token ? `token:${token[1]}` : `ip:${request.ip}`;
    },
    errorResponseBuilder: (_request, context) => Object.assign(new ServiceError('rate-limited', `over ${context.max} requests a minute; try again in ${Math.ceil(context.ttl / 1000)} s`), { retryAfter: Math.ceil(context.ttl / 1000) }),
  });
  await app.register(responseValidation, { ajv: contractAjv(false), responseStatusCodeValidation: true });

  app.setNotFoundHandler((request, reply) => sendProblem(reply, request, 'not-found', `no operation ${request.method} ${request.url.split('?')[0]}`));
  app.setErrorHandler((error: FastifyError | ServiceError, request, reply) => {
    if (error instanceof ServiceError) {
      if (error.code === 'rate-limited') reply.header('retry-after', String((error as ServiceError & { retryAfter?: number }).retryAfter ?? 60));
      return sendProblem(reply, request, error.code, error.code === 'internal' ? undefined : error.problem().detail, error.errors);
    }
    // The glue's security check wraps what the handler threw.
    const wrapped = (error as { errors?: unknown[] }).errors?.find((e): e is ServiceError => e instanceof ServiceError);
    if (wrapped) return sendProblem(reply, request, wrapped.code, wrapped.problem().detail, wrapped.errors);
    switch ((error as FastifyError).code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(reply, request, 'too-large', `the body is larger than ${BODY_LIMIT} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(reply, request, 'unsupported-media-type', 'the body must be application/json');
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return sendProblem(reply, request, 'invalid-request', 'the body is not JSON', [{ pointer: '/', detail: 'not JSON' }]);
    }
    if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) return sendProblem(reply, request, 'invalid-request', 'the body is not JSON', [{ pointer: '/', detail: 'not JSON' }]);
    request.log.error({ err: error }, 'internal error');
    if (process.env.MCPBENCH_API_DEBUG) process.stderr.write(`mcpbench api: ${request.method} ${request.url}: ${(error as Error).stack ?? error}\n`);
    return sendProblem(reply, request, 'internal');
  });

  await app.register(openapiGlue, {
    specification: loadContract(options.root),
    serviceHandlers: handlers(service),
    securityHandlers: {
      // Authentication is the handlers' (they need the caller); the contract's scopes are checked there.
      bearerAuth: async () => undefined,
    },
  });
  return app;
}
