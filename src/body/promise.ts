// Reading a body without middleware: a Promise of what the middleware would put in `req.body`, or
// of the error it would pass to `next`. Node.js requests take the middleware's own skip rules and
// pipeline; Fetch Requests are handed to fetch.ts.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Http2ServerRequest } from 'node:http2'
import type { HttpError } from 'http-errors'
import onFinished from 'on-finished'
import { isFetchRequest, optionsForFetch, readFetchBody } from './fetch.js'
import type { FetchRequest } from './fetch.js'
import type { BodyOptions } from './options.js'
import { hasBody, readBody } from './read.js'
import type { BodySource, ReadOptions } from './read.js'

/** A Node.js request: node:http's, or the http2 compatibility API's. */
export type NodeRequest = IncomingMessage | Http2ServerRequest

/** What the readers accept: a Node.js request or a WHATWG Fetch `Request`. */
export type BodyRequest = NodeRequest | FetchRequest

/**
 * What a reader's `verify` receives as `res`: always undefined, as a reader has no response at
 * hand. For Node.js requests the type also admits a ServerResponse, so options written for the
 * middleware can be passed to a reader unchanged.
 */
export type ReaderResponse<R> = R extends FetchRequest ? undefined : ServerResponse | undefined

// the options of a reader called without any, resolved once per reader
const defaults = new WeakMap<object, ReadOptions>()

function resolved<O> (options: O | undefined, resolve: (options: O | undefined) => ReadOptions): ReadOptions {
  if (options !== undefined) return resolve(options)
  let settings = defaults.get(resolve)
  if (settings === undefined) {
    settings = resolve(undefined)
    defaults.set(resolve, settings)
  }
  return settings
}

interface Settle {
  resolve: (body: unknown) => void
  reject: (err: HttpError) => void
}

/**
 * Reads `req` with the options `resolve` makes of `options`. Bad options and a throwing `type`
 * reject the promise rather than throw.
 */
export async function readRequest<O extends BodyOptions<never, never, never>> (req: BodyRequest, options: O | undefined,
  resolve: (options: O | undefined) => ReadOptions): Promise<unknown> {
  if (isFetchRequest(req)) return await readFetchBody(req, resolved(optionsForFetch(options, req), resolve))
  if (req === null || typeof req !== 'object' || typeof (req as { on?: unknown }).on !== 'function') {
    throw new TypeError('argument req must be an http.IncomingMessage, an http2 request or a Fetch Request')
  }
  return await readNodeBody(req, resolved(options, resolve))
}

function readNodeBody (req: NodeRequest, options: ReadOptions): Promise<unknown> | undefined {
  // the middleware's skip rules, which end in `next()` with nothing set: a body already read, no
  // body, another type
  if (onFinished.isFinished(req as IncomingMessage) || !hasBody(req) || !options.matches(req)) return undefined
  return new Promise((resolve, reject) => {
    readBody(req as BodySource, undefined, options, settle, { resolve, reject })
  })
}

function settle (err: HttpError | null, body: unknown, _req: BodySource, arg: Settle): void {
  if (err !== null) arg.reject(err)
  else arg.resolve(body)
}
