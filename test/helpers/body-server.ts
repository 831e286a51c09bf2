// A test server for the body parsers. Each middleware is mounted at its own path; the server runs
// it and answers with a JSON description of what `next` saw: the error (status, type, message and
// the extra properties of SPEC 7) or `req.body`, how many times `next` ran, and how many listeners
// were left on the request. `compare` sends one request through foyer and through body-parser.
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { request, startServer } from './server.js'
import type { Middleware, RequestOptions, TestServer } from './server.js'
import type { Sizes } from './body-arbitraries.js'

export interface Seen {
  /** `next` was called with an error */
  error?: {
    name: string
    message: string
    status: unknown
    statusCode: unknown
    expose: unknown
    type: unknown
    /** the first line of its stack (the name and message it was made with) */
    stackHead: unknown
    /** own enumerable property names, sorted */
    keys: string[]
    /** the SPEC 7 properties that are present (a Buffer `body` as { hex }) */
    props: Record<string, unknown>
  }
  /** `req.body` after a successful `next()`; a Buffer as { hex }, undefined as { undefined: true } */
  body?: unknown
  /** listeners left on the request for data, end, error, close and aborted */
  listeners: number
  /** of those, the listeners for error */
  errorListeners: number
}

const PROPS = ['body', 'charset', 'code', 'encoding', 'expected', 'length', 'limit', 'received']

/** JSON-safe form of a value that may be a Buffer or undefined. */
export function describeValue (value: unknown): unknown {
  if (value === undefined) return { undefined: true }
  if (Buffer.isBuffer(value)) return { hex: value.toString('hex') }
  return value
}

/** What a test compares of an error: its name, message, status, type, stack's first line, keys and SPEC 7 properties. */
export function describeError (err: unknown): NonNullable<Seen['error']> {
  const e = err as Record<string, unknown> & Error
  const props: Record<string, unknown> = {}
  for (const key of PROPS) if (key in e) props[key] = describeValue(e[key])
  return {
    name: e.name,
    message: e.message,
    status: e['status'],
    statusCode: e['statusCode'],
    expose: e['expose'],
    type: e['type'],
    stackHead: typeof e.stack === 'string' ? e.stack.split('\n', 1)[0] : e.stack,
    keys: Object.keys(e).sort(),
    props
  }
}

export type Before = (req: IncomingMessage, res: ServerResponse) => void

export interface BodyServer extends TestServer {
  /** Mounts a middleware (with an optional hook run just before it) and returns its path. */
  mount: (mw: Middleware | unknown, before?: Before) => string
  /** Requests whose `next` ran more than once (a bug), by path. */
  repeated: string[]
  /** Resolves with what `next` sees on the next request to `path`, even when no reply can be sent. */
  observe: (path: string) => Promise<Seen>
}

export async function startBodyServer (): Promise<BodyServer> {
  const mounts = new Map<string, { mw: Middleware, before: Before | undefined }>()
  const repeated: string[] = []
  const observers = new Map<string, Array<(seen: Seen) => void>>()
  let id = 0
  const server = await startServer((req, res) => {
    const path = req.url ?? '/'
    const mount = mounts.get(path)
    if (mount === undefined) { res.statusCode = 404; res.end(); return }
    mount.before?.(req, res)
    let calls = 0
    mount.mw(req, res, (err?: unknown) => {
      if (++calls > 1) { repeated.push(path); return }
      const listeners = ['data', 'end', 'error', 'close', 'aborted'].reduce((n, e) => n + req.listenerCount(e), 0)
      const seen: Seen = { listeners, errorListeners: req.listenerCount('error') }
      if (err !== undefined && err !== null) {
        seen.error = describeError(err)
      } else {
        seen.body = describeValue((req as IncomingMessage & { body?: unknown }).body)
      }
      for (const resolve of observers.get(path)?.splice(0) ?? []) resolve(seen)
      if (res.writableEnded || res.destroyed) return
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(seen))
    })
  })
  return Object.assign(server, {
    repeated,
    async observe (path: string): Promise<Seen> {
      return await new Promise<Seen>((resolve) => {
        const list = observers.get(path) ?? []
        list.push(resolve)
        observers.set(path, list)
      })
    },
    mount (mw: Middleware | unknown, before?: Before): string {
      const path = `/m${++id}`
      mounts.set(path, { mw: mw as Middleware, before })
      return path
    }
  })
}

/** Sends a request to a mounted path and returns what the middleware's `next` saw. */
export async function send (server: BodyServer, path: string, options: RequestOptions): Promise<Seen & { status: number }> {
  const reply = await request(server.port, { method: 'POST', ...withLength(options), path })
  assert.equal(reply.status, 200, `the test server answers 200, got ${reply.status}: ${reply.body}`)
  assert.deepEqual(server.repeated, [], '`next` runs once per request')
  return { ...(JSON.parse(reply.body) as Seen), status: reply.status }
}

/** A body sent in one piece gets a Content-Length, as real clients send it; chunks go chunked. */
function withLength (options: RequestOptions): RequestOptions {
  const { body, headers = {} } = options
  if (body === undefined || Array.isArray(body)) return options
  const names = Object.keys(headers).map((name) => name.toLowerCase())
  if (names.includes('content-length') || names.includes('transfer-encoding')) return options
  return { ...options, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }
}

/**
 * Sends the same request through a foyer middleware and a body-parser one and asserts that `next`
 * saw the same thing: the same body, or an error with the same name, message, status, type,
 * property names and SPEC 7 properties. Returns what foyer's saw.
 */
export async function compare (server: BodyServer, foyer: unknown, reference: unknown, options: RequestOptions,
  before?: Before): Promise<Seen> {
  const ours = await send(server, server.mount(foyer, before), options)
  const theirs = await send(server, server.mount(reference, before), options)
  assert.deepEqual(withoutListeners(ours), withoutListeners(theirs), `foyer and body-parser differ for ${JSON.stringify(options.body ?? '').slice(0, 200)}`)
  assertListenersLeft(ours)
  return ours
}

/**
 * After an error no listener is left on the request. After a body is read, the reader's 'data',
 * 'end', 'close' and 'aborted' listeners may stay (they find nothing to do), but no 'error'
 * listener does.
 */
export function assertListenersLeft (seen: Seen): void {
  if (seen.error !== undefined) assert.equal(seen.listeners, 0, 'no listener is left on the request after an error')
  else assert.equal(seen.errorListeners, 0, 'no error listener is left on the request after a read')
}

function withoutListeners (seen: Seen): Record<string, unknown> {
  return { error: seen.error, body: seen.body }
}

/** Reads the next whole HTTP response (with a Content-Length) from a raw socket, within `ms`. */
export async function readResponse (socket: Socket, ms = 10_000): Promise<{ status: number, head: string, body: string }> {
  return await new Promise((resolve, reject) => {
    let data = Buffer.alloc(0)
    const timer = setTimeout(() => { cleanup(); reject(new Error(`no whole response within ${ms} ms`)) }, ms)
    const onData = (chunk: Buffer): void => {
      data = Buffer.concat([data, chunk])
      const end = data.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = data.subarray(0, end).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (data.length < end + 4 + length) return
      cleanup()
      resolve({ status: Number(head.slice(9, 12)), head, body: data.subarray(end + 4, end + 4 + length).toString('utf8') })
    }
    const onEnd = (): void => { cleanup(); reject(new Error(`connection closed before a whole response: ${data.toString('latin1')}`)) }
    const cleanup = (): void => { clearTimeout(timer); socket.off('data', onData); socket.off('end', onEnd); socket.off('error', reject) }
    socket.on('data', onData)
    socket.on('end', onEnd)
    socket.on('error', reject)
  })
}

/** The head of a POST to `path` on a raw socket. */
export function requestHead (path: string, headers: Record<string, string | number>): string {
  return [`POST ${path} HTTP/1.1`, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n')
}

/** `promise`, or a rejection naming `what` when it has not settled within 5 s: a property never hangs. */
export async function within<T> (promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`${what}: no answer within 5 s`)) }, 5000)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** What `next` saw, as the test servers answer it: the error, or `req.body`. */
export interface Outcome { error?: Seen['error'], body?: unknown }

// a body up to this size reaches the server in the chunks the client wrote it in
const ONE_READ = 16 * 1024

/**
 * `ours` with `received` of a 413 taken from `theirs`, once both are checked to be past the limit
 * and within the body: the 413 comes at the chunk that passes the limit (README, "Fail fast on
 * oversize"), and the chunks differ when TCP cuts a large body, or when the two were not given
 * the same pieces (`sameChunks` false).
 */
export function receivedAside (ours: Outcome, theirs: Outcome, size: Sizes, sameChunks: boolean): Outcome {
  const error = ours.error
  const reference = theirs.error
  if (error?.type !== 'entity.too.large' || reference?.type !== 'entity.too.large') return ours
  const received = error.props['received']
  const expected = reference.props['received']
  if (typeof received !== 'number' || typeof expected !== 'number') return ours
  for (const count of [received, expected]) {
    assert.ok(count > size.limit && count <= size.inflated, `received ${count} is past the limit ${size.limit} and within the body (${size.inflated})`)
  }
  if (size.wire <= ONE_READ && sameChunks) return ours
  return { ...ours, error: { ...error, props: { ...error.props, received: expected } } }
}

/** The same outcome, and a body's keys in the same order, as the application would iterate them. */
export function assertSameOutcome (ours: Outcome, theirs: Outcome, what: string): void {
  assert.deepEqual(ours, theirs, `${what} differ`)
  assert.equal(JSON.stringify(ours.body), JSON.stringify(theirs.body), `${what}: the body's keys come in the same order`)
}
