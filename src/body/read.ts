// The one pipeline every parser shares: skip rules, charset check, length and limit, inflation,
// collecting bytes, decoding, verify, then the parser's own `parse`. A fix to limits or aborts is
// made here, once.
//
// raw-body is not used: it stops reading at the limit and leaves the request paused, and
// body-parser then waits for the whole remaining body before calling `next`, so a client streaming
// an endless body never gets its 413. This reader calls back at once and lets the rest drain into
// nothing. Its listeners are shared functions that find the request's state under a symbol, so a
// request costs one state object rather than a closure per event.
import { AsyncResource } from 'node:async_hooks'
import { IncomingMessage } from 'node:http'
import type { ServerResponse } from 'node:http'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import { Socket } from 'node:net'
import type { Readable, Transform } from 'node:stream'
import onFinished from 'on-finished'
import { isHttp2Compat } from '../http2.js'
import { bytesOf } from '../chunk.js'
import { RESOURCE_OPTIONS } from '../resource.js'
import { charsetAllowed, charsetKnown, decodeBody, headerCharset } from './charset.js'
import type { CharsetRule } from './charset.js'
import {
  charsetUnsupported, declaredTooLarge, encodingUnsupported, inflateDisabled, parseFailed, receivedTooLarge,
  requestAborted, sizeInvalid, streamEncodingSet, streamFailed, streamNotReadable, verifyFailed
} from './errors.js'
import type { BodyError } from './errors.js'
import { contentEncoding, inflaterFor } from './inflate.js'
import type { InflaterFactory } from './inflate.js'
import type { CommonSettings } from './options.js'

/**
 * A connect-style middleware that parses the request body into `req.body`, for Express, Connect,
 * node:http and node:http2's compatibility API. It calls `next()` once: with no argument when the
 * body was parsed or skipped, with a `BodyError` when it was refused.
 */
export type BodyMiddleware = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse, next: (err?: BodyError) => void) => void

/** Everything the pipeline needs to read one kind of body, resolved when the middleware is made. */
export interface ReadOptions extends CommonSettings {
  charsets: CharsetRule
  /** Turns the decoded body (a Buffer when `charsets` is 'none') into `req.body`; throws to refuse it. */
  parse: (body: string | Buffer, charset: string | null) => unknown
  /**
   * The middleware's: puts the parsed body on the request within the parse stage, so that an
   * assignment that throws (a `req.body` with a getter only, or read-only) is refused as a parse
   * error, as in body-parser, rather than thrown from a stream listener.
   */
  store?: ((req: unknown, body: unknown) => void) | undefined
}

/** The request headers the pipeline reads. */
export interface BodyHeaders {
  'content-type'?: string | undefined
  'content-encoding'?: string | undefined
  'content-length'?: string | undefined
  'transfer-encoding'?: string | undefined
}

/** The key of `BodySource`'s method that takes hold of the body (see there). */
export const kBegin: unique symbol = Symbol('foyer.body.begin')

/**
 * What the pipeline reads a body from: a Node.js stream of its bytes carrying the request's
 * headers. An IncomingMessage and an http2 compat request are one; a Fetch body is adapted to one.
 */
export interface BodySource extends Readable {
  readonly headers: BodyHeaders
  /**
   * A source that must take hold of its body before it is read (a Fetch body, which its reader
   * locks) does so here, once the headers let the body be read: a body they refuse is never
   * taken. Throws the BodyError to answer when the body cannot be taken.
   */
  readonly [kBegin]?: (() => void) | undefined
}

/** Receives the outcome of `readBody`, in the async context `readBody` was called in. */
export type ReadCallback<T, S extends BodySource = IncomingMessage> = (err: BodyError | null, body: unknown, req: S, arg: T) => void

type BodyCarrier = IncomingMessage & { body?: unknown }

const kRead = Symbol('foyer.body.read')
// shared by every copy of this module (ESM and CommonJS), whose parsers may follow one another
const kDiscarded = Symbol.for('foyer.body.discarded')

interface Carrier { [kRead]?: ReadState | undefined, [kDiscarded]?: true }

// The state is itself the AsyncResource that carries the caller's async context (AsyncLocalStorage)
// to the callback, as raw-body's wrapped callback does: one object per request rather than two.
class ReadState extends AsyncResource {
  readonly req: BodySource
  readonly res: ServerResponse | Http2ServerResponse | undefined
  readonly options: ReadOptions
  readonly charset: string | null
  readonly inflater: Transform | null
  /** Content-Length of an identity body, else null. */
  readonly expected: number | null
  readonly callback: ReadCallback<unknown, BodySource>
  readonly arg: unknown
  chunks: Buffer[] = []
  /** Where small chunks are copied once there are many (see `collect`), and its used part. */
  joined: Buffer | undefined = undefined
  joinedStart = 0
  joinedEnd = 0
  /** Body bytes collected so far (after inflation): what the limit counts. */
  size = 0
  /** Bytes received from the client. */
  wire = 0
  ended = false
  done = false
  /** The app destroyed the request mid-body: it fails once its connection has failed or closed (see onAborted). */
  closing = false

  constructor (req: BodySource, res: ServerResponse | Http2ServerResponse | undefined, options: ReadOptions, charset: string | null,
    inflater: Transform | null, expected: number | null, callback: ReadCallback<unknown, BodySource>, arg: unknown) {
    super('foyer.body', RESOURCE_OPTIONS)
    this.req = req
    this.res = res
    this.options = options
    this.charset = charset
    this.inflater = inflater
    this.expected = expected
    this.callback = callback
    this.arg = arg
  }
}

/**
 * The middleware around `readBody`: it applies body-parser's skip rules and sets `req.body`.
 * `req.body` is set to undefined (when absent) for every request with a readable stream, parsed or
 * not, before `type` and `verify` see the request, as body-parser does. `name` is the function's
 * name (body-parser's `jsonParser` and so on), which Express shows as the layer's name.
 */
export function bodyMiddleware (settings: ReadOptions, name: string): BodyMiddleware {
  const options: ReadOptions = { ...settings, store: storeBody }
  const middleware: BodyMiddleware = function bodyParser (req, res, next) {
    // already read (by another parser, or the same one mounted twice)
    if (isSpent(req)) { next(); return }
    if (!('body' in req)) (req as BodyCarrier).body = undefined
    if (!hasBody(req) || !options.matches(req)) { next(); return }
    readBody(req, res, options, callNext, next)
  }
  Object.defineProperty(middleware, 'name', { value: name })
  return middleware
}

function storeBody (req: unknown, body: unknown): void {
  (req as BodyCarrier).body = body
}

function callNext (err: BodyError | null, _body: unknown, _req: BodySource, next: (err?: BodyError) => void): void {
  if (err !== null) next(err)
  else next()
}

/**
 * Whether the request carries a body at all: type-is's rule (a Transfer-Encoding or a numeric
 * Content-Length), and for HTTP/2, whose bodies need neither header, a stream the client did not
 * end with its HEADERS frame.
 */
export function hasBody (req: BodySource): boolean {
  const headers = req.headers
  return headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(headers['content-length'])) ||
    (req as { stream?: { endAfterHeaders?: unknown } }).stream?.endAfterHeaders === false
}

/**
 * Reads, inflates, checks and parses the body of `req`, then calls `callback(err, body, req, arg)`
 * once: synchronously for errors found before reading, otherwise in the async context of this call.
 * It does not apply the skip rules (see `bodyMiddleware`). `res` is only passed on to `verify`.
 */
export function readBody<T, S extends BodySource> (req: S, res: ServerResponse | Http2ServerResponse | undefined, options: ReadOptions,
  callback: ReadCallback<T, S>, arg: T): void {
  // The order of the checks is body-parser's, so that a request with several faults gets the same error.
  // (An IncomingMessage's `headers` is a getter: read once.)
  const headers = req.headers
  let charset: string | null = null
  if (options.charsets !== 'none') {
    charset = headerCharset(headers['content-type']) || options.defaultCharset
    if (!charsetAllowed(options.charsets, charset)) {
      callback(charsetUnsupported(charset), undefined, req, arg)
      return
    }
    // SPEC 7 / body-parser: with verify, an unknown charset is refused before verify sees the bytes
    if (options.verify !== undefined && !charsetKnown(charset)) {
      callback(charsetUnsupported(charset.toLowerCase()), undefined, req, arg)
      return
    }
  }

  const encoding = contentEncoding(headers)
  let inflater: InflaterFactory | undefined
  if (encoding !== 'identity') {
    if (!options.inflate) {
      callback(inflateDisabled(encoding), undefined, req, arg)
      return
    }
    inflater = inflaterFor(encoding)
    if (inflater === undefined) {
      callback(encodingUnsupported(encoding), undefined, req, arg)
      return
    }
  }

  // Content-Length describes the encoded bytes, so it is only checked for identity bodies
  const expected = inflater === undefined ? declaredLength(headers) : null
  let early: BodyError | undefined
  if (expected !== null && expected > options.limit) {
    // fail fast: answer before reading a byte of a body that is already known to be too large
    early = declaredTooLarge(expected, options.limit)
  } else if (req.readableEncoding !== null && req.readableEncoding !== undefined) {
    early = streamEncodingSet()
  } else if (clientLeft(req)) {
    early = requestAborted(0, expected)
  } else if (req.readable === false || stateOf(req as Carrier) !== undefined) {
    // (`readable` as raw-body reads it: an object that does not say, a request double that only
    // emits 'data' and 'end', is read)
    // a stream being read by another call (two readers at once) is not readable to this one:
    // each would see only the chunks after it started, and both states would feed the last one
    early = streamNotReadable()
  } else if (options.verify === undefined && charset !== null && !charsetKnown(charset)) {
    early = charsetUnsupported(charset.toLowerCase())
  }
  if (early !== undefined) {
    discard(req)
    callback(early, undefined, req, arg)
    return
  }
  const begin = req[kBegin]
  if (begin !== undefined) {
    try {
      begin.call(req)
    } catch (err) {
      callback(err as BodyError, undefined, req, arg)
      return
    }
  }

  const stream = inflater === undefined ? null : inflater()
  const state = new ReadState(req, res, options, charset, stream, expected, callback as ReadCallback<unknown, BodySource>, arg)
  ;(req as Carrier)[kRead] = state
  req.on('data', onData)
  req.on('end', onEnd)
  req.on('error', onError)
  req.on('close', onClose)
  // The client leaving is heard at 'aborted', as raw-body hears it: node:http emits it while it
  // closes the connection, before the response's 'close', where the request's own 'error' and
  // 'close' come a tick later, after it; an app's error handler called then would set a status
  // the response had already closed with (what a tracing agent or a metrics hook on the
  // response's 'close' records). A stream standing in for a request may signal it with
  // 'aborted' alone. An http2 compat request is not told to go on at 'aborted': its stream is
  // closed but not yet destroyed there, and the compat response's end() throws an uncaught
  // ERR_HTTP2_INVALID_STREAM in between (an app answering its error at once would crash); at
  // 'close' it is destroyed, and end() does nothing, as when body-parser calls back.
  if (!isHttp2Compat(req)) req.on('aborted', onAborted)
  if (stream !== null) {
    (stream as Carrier)[kRead] = state
    stream.on('data', onInflated)
    stream.on('end', onInflatedEnd)
    stream.on('error', onInflateError)
    stream.on('drain', onDrain)
  }
  // a stream paused earlier would not start flowing on its own
  if (req.readableFlowing !== true) resume(req)
}

/** Resumes `req`; a request double that only emits events has nothing to resume. */
function resume (req: BodySource): void {
  if (typeof req.resume === 'function') req.resume()
}

/** The stages after the bytes are in: verify, decode, parse. Throws the parser's BodyError. */
export function parseBytes (buf: Buffer, charset: string | null, options: ReadOptions, req: unknown,
  res: unknown): unknown {
  const verify = options.verify
  if (verify !== undefined) {
    try {
      // a plain call, as body-parser makes it: `this` is undefined in verify
      verify(req, res, buf, charset)
    } catch (err) {
      throw verifyFailed(err, buf)
    }
  }
  let body: string | Buffer = buf
  try {
    if (charset !== null) body = decodeBody(buf, charset)
    const value = options.parse(body, charset)
    if (options.store !== undefined) options.store(req, value)
    return value
  } catch (err) {
    throw parseFailed(err, body)
  }
}

// raw-body's reading of Content-Length: numeric text, parsed as an integer
function declaredLength (headers: BodyHeaders): number | null {
  const header = headers['content-length']
  if (header === undefined || Number.isNaN(Number(header))) return null
  return parseInt(header, 10)
}

function stateOf (stream: Carrier): ReadState | undefined {
  const state = stream[kRead]
  return state === undefined || state.done ? undefined : state
}

/**
 * How many encoded bytes a compressed body may take before it is refused with a 413: twice the
 * limit, and 1 MiB more for small limits. `limit` counts what the body inflates to, so without
 * this bound a body that inflates to nothing (empty deflate blocks, a gzip file name that never
 * ends) could be sent forever, the decompressor working on every byte. No encoder expands data
 * anywhere near this much: deflate, brotli and zstd add a few bytes per block of stored data.
 * The bound is loose on purpose: it only has to end such a body, and any body under it keeps
 * the outcome it has with body-parser (a decompressor's error may come late, at the end).
 */
export function encodedLimit (limit: number): number {
  return 2 * limit + 1024 * 1024
}

function onData (this: BodySource, data: unknown): void {
  const state = stateOf(this as Carrier)
  if (state === undefined) return
  // (from a stream standing in for the request in object mode: a string's bytes in UTF-8, as
  // body-parser decodes text)
  const chunk = data instanceof Buffer ? data : bytesOf(data)
  if (chunk === undefined) {
    // an object-mode stream standing in for the request, giving something that is not bytes
    fail(state, streamNotReadable())
    return
  }
  state.wire += chunk.length
  if (state.inflater === null) {
    collect(state, chunk)
  } else if (state.wire > encodedLimit(state.options.limit)) {
    // `received` is what was received, the encoded bytes: what passed the bound
    fail(state, receivedTooLarge(state.wire, state.options.limit))
  } else if (!state.inflater.write(chunk) && typeof this.pause === 'function') {
    this.pause()
  }
}

function onInflated (this: Transform, chunk: Buffer): void {
  const state = stateOf(this as Carrier)
  if (state !== undefined) collect(state, chunk)
}

// Each chunk kept costs a Buffer object and its backing store, a few hundred bytes besides its
// own, whatever its length. A client sending its body a byte per chunk would make a body under
// the limit hold two hundred times its size (100,000 one-byte chunks: about 19 MiB of heap
// for 98 KiB of body). Past MANY_CHUNKS chunks, those under SMALL_CHUNK bytes are copied into
// buffers instead, each as large as the body so far (at least MIN_JOINED, at most JOINED_SIZE),
// so what a request holds stays under about twice its body's size: a slow client trickling a
// few bytes at a time holds a small buffer, not a 64 KiB one. Bodies that come in a few chunks,
// as nearly all do, are never copied.
const MANY_CHUNKS = 8
const SMALL_CHUNK = 4096
const MIN_JOINED = 1024
const JOINED_SIZE = 64 * 1024

function collect (state: ReadState, chunk: Buffer): void {
  state.size += chunk.length
  if (state.size > state.options.limit) {
    // limit counts inflated bytes (decompression bombs), and fails as soon as it is passed
    fail(state, receivedTooLarge(state.size, state.options.limit))
    return
  }
  if (chunk.length >= SMALL_CHUNK || state.chunks.length < MANY_CHUNKS) {
    keepJoined(state)
    state.chunks.push(chunk)
    return
  }
  let joined = state.joined
  if (joined === undefined || state.joinedEnd + chunk.length > joined.length) {
    keepJoined(state)
    // (the size so far counts this chunk: it fits)
    joined = state.joined = Buffer.allocUnsafeSlow(Math.min(JOINED_SIZE, Math.max(MIN_JOINED, state.size)))
    state.joinedStart = state.joinedEnd = 0
  }
  state.joinedEnd += chunk.copy(joined, state.joinedEnd)
}

/** Adds the bytes copied since the last chunk kept, if any, to the chunks, in their place. */
function keepJoined (state: ReadState): void {
  if (state.joinedEnd === state.joinedStart) return
  state.chunks.push((state.joined as Buffer).subarray(state.joinedStart, state.joinedEnd))
  state.joinedStart = state.joinedEnd
}

function onDrain (this: Transform): void {
  const state = stateOf(this as Carrier)
  if (state !== undefined) resume(state.req)
}

function onEnd (this: BodySource): void {
  const state = stateOf(this as Carrier)
  if (state === undefined) return
  // An HTTP/2 stream the client reset ends its request after 'aborted': without a Content-Length
  // to check, that end would pass the part received for the whole body.
  if ((this as { aborted?: unknown }).aborted === true) {
    fail(state, requestAborted(state.wire, state.expected))
    return
  }
  state.ended = true
  if (state.inflater === null) complete(state)
  else state.inflater.end()
}

function onInflatedEnd (this: Transform): void {
  const state = stateOf(this as Carrier)
  if (state !== undefined) complete(state)
}

function onInflateError (this: Transform, err: unknown): void {
  const state = stateOf(this as Carrier)
  // corrupt or truncated compressed data
  if (state !== undefined) fail(state, streamFailed(err))
}

// An aborted request emits 'aborted', then 'error' (ECONNRESET; an IncomingMessage only when it has
// 'error' listeners), then 'close'. The 'error' listener stays for an 'error' emitted some other
// way, which would otherwise be thrown. Once the request has ended (an inflated body may still be
// flushing) neither means anything.
function onError (this: BodySource, err?: unknown): void {
  const state = stateOf(this as Carrier)
  if (state === undefined || state.ended || state.closing) return
  fail(state, sourceError(this, err, state))
}

/**
 * What an 'error' of the request stream becomes: request.aborted when the client went away (node
 * marks the request aborted, and its error is an ECONNRESET), the source's own verdict as it is,
 * and any other error of the stream itself (a stream standing in for the request that failed)
 * passed on as body-parser passes it, with status 400 unless it has its own. A text in place of
 * an error (`emit('error', 'upstream failed')` from a stand-in) is the message of a 400, as in
 * body-parser. Any other value that is not an object is request.aborted: body-parser takes a
 * falsy one for the end of the body, and would parse what came before it as if it were all.
 */
function sourceError (source: BodySource, err: unknown, state: ReadState): BodyError {
  if (typeof err === 'string' && err !== '' && (source as { aborted?: unknown }).aborted !== true) return streamFailed(err)
  if (err === null || typeof err !== 'object') return requestAborted(state.wire, state.expected)
  if (passedOn.has(err)) return err as BodyError
  if (aborts.has(err) || (source as { aborted?: unknown }).aborted === true || (err as { code?: unknown }).code === 'ECONNRESET') {
    return requestAborted(state.wire, state.expected)
  }
  return streamFailed(err)
}

// Errors a source raises (`destroy(err)`) that are its own verdict on the body rather than the
// client going away, passed on as they are.
const passedOn = new WeakSet<object>()

/** Marks `err` for a source to raise: the pipeline then fails with it instead of request.aborted. */
export function passOn (err: BodyError): BodyError {
  passedOn.add(err)
  return err
}

// Errors a source raises when its client went away, whatever they say.
const aborts = new WeakSet<object>()

/** Marks `err` for a source to raise as the client going away: the pipeline fails with request.aborted. */
export function asAbort (err: Error): Error {
  aborts.add(err)
  return err
}

function onClose (this: BodySource): void {
  const state = stateOf(this as Carrier)
  if (state !== undefined && !state.ended && !state.closing) fail(state, requestAborted(state.wire, state.expected))
}

/**
 * node:http also emits 'aborted' inside `req.destroy()` called by the app (a deadline, a
 * middleware giving up on the request), with the connection still open. `next(err)` is not
 * called from inside that call, where an app would find its response already answered by its
 * error handler when the call returns, nor from the request's own 'error' and 'close' that
 * follow: node emits them a tick later, before the connection's 'close' and so before the
 * response's, and an error handler called there would end the response, unsent, with a status
 * that a logger or a tracing agent hearing the response's 'close' records. It is called from the
 * connection's 'close', after node has closed the response, or from its 'error' when the app gave
 * destroy() one, as body-parser calls it (from the on-finished listener it adds then). A request
 * made by hand on a stand-in for a connection that has no such events fails at once, as before.
 */
function onAborted (this: BodySource): void {
  const socket = this instanceof IncomingMessage ? this.socket as Partial<Socket> | null | undefined : null
  if (socket === null || socket === undefined || socket.destroyed !== false || typeof socket.on !== 'function' || typeof socket.removeListener !== 'function') {
    onClose.call(this)
    return
  }
  const state = stateOf(this as Carrier)
  if (state === undefined || state.ended || state.closing) return
  state.closing = true
  // on-finished hears the connection's 'error' (destroyed with one) or its 'close'
  onFinished(this as IncomingMessage, () => {
    if (stateOf(state.req as Carrier) === state) fail(state, requestAborted(state.wire, state.expected))
  })
}

function ignore (): void {}

/**
 * Detaches from the request and the decompressor. The 'error' listener always goes, so an error
 * emitted on the request later is not swallowed here; the 'data', 'end', 'close' and 'aborted'
 * ones go with `all`. Without it (a body read whole) they stay unless the body is refused: the
 * request has ended, or a decompressor ended before trailing bytes of its input, so they only
 * find the state done and return. Removing them was the largest cost this reader added to a
 * small body (callgrind, a json middleware over real request objects in-process: 30,100
 * instructions per request with the removal, 28,100 without, 26,300 for reading the chunks with
 * no checks; an in-process A/B took 6 % less time). After an error no listener is left.
 */
function settle (state: ReadState, all: boolean): void {
  state.done = true
  const req = state.req
  if (all) detach(req)
  req.removeListener('error', onError)
  ;(req as Carrier)[kRead] = undefined
  const inflater = state.inflater
  if (inflater !== null) {
    (inflater as Carrier)[kRead] = undefined
    // a decompressor destroyed mid-write may still report; nobody is listening any more
    inflater.on('error', ignore)
    inflater.destroy()
  }
}

function detach (req: BodySource): void {
  req.removeListener('data', onData)
  req.removeListener('end', onEnd)
  req.removeListener('close', onClose)
  req.removeListener('aborted', onAborted)
}

function fail (state: ReadState, err: BodyError): void {
  settle(state, true)
  state.chunks = []
  state.joined = undefined
  discard(state.req)
  state.runInAsyncScope(state.callback, null, err, undefined, state.req, state.arg)
}

function complete (state: ReadState): void {
  settle(state, false)
  // a decompressor may finish before its input does (trailing bytes)
  discard(state.req)
  keepJoined(state)
  state.joined = undefined
  const chunks = state.chunks
  state.chunks = []
  if (state.expected !== null && state.wire !== state.expected) {
    detach(state.req)
    state.runInAsyncScope(state.callback, null, sizeInvalid(state.wire, state.expected), undefined, state.req, state.arg)
    return
  }
  // A lone chunk is decoded from as it is. A Buffer the application keeps (raw's req.body, what
  // verify stores) has bytes of its own, as Buffer.concat gives: so has the lone chunk that
  // node:http's parser copied out of the socket's read buffer, which nothing writes to afterwards.
  // Taking it as it is, rather than copying it again, took a quarter less server CPU per request
  // on raw-40kb in the bench (10 rounds side by side: 25.4 against 34.0 us, median per-round
  // ratio 0.75).
  const lone = chunks.length === 1 ? chunks[0] as Buffer : undefined
  const buf = lone !== undefined && ((state.charset !== null && state.options.verify === undefined) || ownBytes(state, lone))
    ? lone
    : Buffer.concat(chunks, state.size)
  // verify, the decoding and the parser (a json reviver) run in the caller's async context too, as
  // body-parser's do: an AsyncLocalStorage store the app set around the middleware is theirs.
  state.runInAsyncScope(parseAndReport, null, state, buf)
}

/**
 * Whether `chunk`, a whole body, is a Buffer with bytes of its own that nothing else writes to:
 * one that node:http's parser copied out of the read buffer of a connection it read the request
 * from. The parser of a connection holds the request it is reading (until the headers of the
 * next one come in), and pushes each piece through the request's own push(). A request filled by
 * hand (a serverless adapter's, a test injector's under Express, a middleware's stand-in on the
 * connection itself), or one whose push() a middleware replaced (to transform the body into a
 * buffer of its own), may be given a Buffer its maker still holds, and is copied.
 */
function ownBytes (state: ReadState, chunk: Buffer): boolean {
  const req = state.req
  if (state.inflater !== null || !(req instanceof IncomingMessage) || !(req.socket instanceof Socket)) return false
  const parser = (req.socket as Socket & { parser?: { incoming?: unknown } | null }).parser
  return parser !== null && parser !== undefined && parser.incoming === req && req.push === IncomingMessage.prototype.push &&
    chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
}

function parseAndReport (state: ReadState, buf: Buffer): void {
  const { callback, req } = state
  let body: unknown
  try {
    body = parseBytes(buf, state.charset, state.options, req, state.res)
  } catch (err) {
    detach(req)
    callback(err as BodyError, undefined, req, state.arg)
    return
  }
  callback(null, body, req, state.arg)
}

/**
 * Lets the rest of a body the parser gave up on drain away unread, so that the response can go out
 * while the client is still sending, and memory stays bounded whatever the client sends. The
 * request is marked, so that a later parser (an app whose error handler passes the 413 over)
 * does not take the rest for a body of its own: body-parser drains the body before calling
 * `next(err)`, so there the later parser finds the request finished.
 */
function discard (req: BodySource): void {
  if (req.readableEnded) return
  (req as Carrier)[kDiscarded] = true
  resume(req)
}

/**
 * Whether the request's body was read already, or is being thrown away after a refusal. A body
 * whose client left before it was read (see `clientLeft`) was not: it is a 400 request.aborted,
 * where body-parser, which asks on-finished only, takes the request for one read already and
 * passes it on with no body.
 */
export function isSpent (req: BodySource): boolean {
  return (req as Carrier)[kDiscarded] === true || (onFinished.isFinished(req as unknown as IncomingMessage) && !clientLeft(req))
}

/**
 * Whether the client left before the body was read to its end: an app's asynchronous step before
 * the parser (an authentication lookup) gave it the time to. What it had sent is gone with the
 * request. Over HTTP/1, node:http destroys a request whose connection closes (or whose client
 * closes its side of it) before the request is read, and the socket is no longer readable; a
 * request made on a stand-in socket (serverless adapters', test injectors', which may say it is
 * not readable) is not destroyed, and is left to the skip rules as before. Over HTTP/2 the client
 * reset the stream, and node:http2 threw away what the stream held and ended the request, so
 * only the stream tells that its end was never read.
 */
function clientLeft (req: BodySource): boolean {
  if (req instanceof IncomingMessage) {
    if (!req.destroyed || req.readableEnded || (req as { upgrade?: unknown }).upgrade === true) return false
    // (a request made by hand, with no connection, is left to the skip rules)
    const socket = req.socket as IncomingMessage['socket'] | null | undefined
    return socket !== null && socket !== undefined && !socket.readable
  }
  return isHttp2Compat(req) && (req as { aborted?: unknown }).aborted === true &&
    (req as { stream?: { readableEnded?: unknown } }).stream?.readableEnded !== true
}
