// When a response starts (its headers are written) and when it is done.
//
// morgan uses on-headers and on-finished for this. Per request, on-headers makes a closure and
// copies the writeHead arguments; on-finished makes five closures through ee-first, and adds
// then removes two listeners on the keep-alive socket. Measured with autocannon (10
// connections, server pinned to one CPU, 'combined' to a file, servers alternating over 16
// rounds, median server CPU per request): 12.8 us without a logger, 15.9 us with this logger,
// 18.5 us with this logger on on-headers and on-finished instead of the hooks below.
// Three other ways measured no cheaper than the hooks below (the same bench, each side by side
// with this code over 12 to 16 rounds, median per-round ratio of server CPU per request, theirs
// to ours): the listener called without an AsyncResource, 1.05; the lines of one event-loop
// turn formatted together after it, 1.02; ServerResponse.prototype's writeHead and emit
// replaced once for the process instead of each response's, 1.01.
//
// The replacements keep what users can observe:
// - the response start is recorded at the first writeHead, and headers passed to writeHead are
//   set on the response first, so `:res[...]` sees them (on-headers does the same);
// - the line is written once per logger when the response finishes or its connection closes
//   or fails first, and right away (next turn) when that already happened;
// - the line is written in the async context the middleware ran in (an AsyncResource, as
//   on-finished 2.4 does), so tokens reading AsyncLocalStorage see the request's store.
// Responses that are not node:http ServerResponses (HTTP/2 compatibility objects, test
// doubles) keep using on-finished.
import { ServerResponse, validateHeaderName, validateHeaderValue } from 'node:http'
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http'
import { AsyncResource } from 'node:async_hooks'
import onFinished from 'on-finished'
import { isUint8Array } from 'node:util/types'
import { bytesOf } from '../chunk.js'
import { isHttp2Compat } from '../http2.js'
import { RESOURCE_OPTIONS } from '../resource.js'
import { recordStartTime } from './clock.js'
import { scheduleImmediate } from './timers.js'
import { beforeExitFlush } from './sink.js'
import type { StartMark } from './clock.js'

type WriteHead = (this: ServerResponse, ...args: unknown[]) => unknown

const PREVIOUS = Symbol('foyer.logger.writeHead')
/** The response's start is marked (see writeHead). */
const MARKED = Symbol('foyer.logger.startMarked')
const PENDING = Symbol('foyer.logger.pending')
// What the tokens read (these and `res._startAt`) is kept under keys every copy of this module
// shares: the built-in tokens are those of the first copy loaded, and a logger made by a later
// copy (a second installed version, a reload) hooks the response for them.
const GIVEN = Symbol.for('foyer.logger.writeHeadHeaders')
/** On the copy kept under GIVEN: the object went on through a writeHead put on the response before the logger's. */
const PASSED_ON = Symbol.for('foyer.logger.writeHeadPassedOn')

interface GivenHeaders extends OutgoingHttpHeaders {
  [PASSED_ON]?: true
}

interface Hooked extends ServerResponse, StartMark {
  [PREVIOUS]?: WriteHead
  [MARKED]?: true | undefined
  [PENDING]?: unknown[] | undefined
  /** The headers object given to writeHead. */
  [GIVEN]?: GivenHeaders
  /** node:http's own: the head of the response as it was written. */
  _header?: unknown
}

function setHeadersFromArray (res: ServerResponse, headers: unknown[]): void {
  if (headers.length > 0 && Array.isArray(headers[0])) {
    for (const pair of headers as Array<[string, OutgoingHttpHeader]>) {
      if (pair[0]) res.setHeader(pair[0], pair[1])
    }
    return
  }
  // A flat [name, value, name, value] list may repeat a name: the values add up.
  if (headers.length % 2 !== 0) throw new TypeError('headers array is malformed')
  if (typeof res.appendHeader !== 'function') {
    // An HTTP/2 compatibility response before Node.js 20.12 has no appendHeader, and its own
    // writeHead sets the names of such a list one after the other: the last value of a name wins.
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i]) res.setHeader(headers[i] as string, headers[i + 1] as string)
    }
    return
  }
  for (let i = 0; i < headers.length; i += 2) res.removeHeader(headers[i] as string)
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]) res.appendHeader(headers[i] as string, headers[i + 1] as string)
  }
}

/** The writeHead every hooked response gets: one shared function, no closure per request. */
function writeHead (this: Hooked, statusCode: unknown, reason?: unknown, headers?: unknown): unknown {
  const previous = this[PREVIOUS] as WriteHead
  // writeHead(status, [reason], [headers]); without a reason, node:http takes the headers from
  // the third argument when the second is undefined or null
  const given = typeof reason === 'string' ? headers : headers ?? reason
  // The response's start is marked at its first writeHead, whatever `res._startAt` holds by then,
  // as on-headers calls morgan's listener once.
  const marking = this[MARKED] !== true
  if (Array.isArray(given)) {
    // Rare: set them as on-headers does, so `:res[...]` reads what morgan reads.
    this.statusCode = statusCode as number
    setHeadersFromArray(this, given)
    if (marking) markStart(this)
    return typeof reason === 'string' ? previous.call(this, this.statusCode, reason) : previous.call(this, this.statusCode)
  }
  // An object is left to node:http as it is: it merges it into headers already set (as
  // on-headers would), or sends it as given. In the second case `:res[...]` finds it here.
  // Setting each header first, as on-headers does, made node:http take its slower path (every
  // header stored and validated one by one): about 0.5 us per response in an in-process A/B
  // over real request and response objects (best of 15 rounds, 4.8 against 5.5 us per request).
  // Kept as it was at this call, which sends it (the app may change or reuse its object
  // afterwards), once node:http took it: a call that throws changes nothing.
  const copy = given !== null && typeof given === 'object' ? copyHeaders(given as OutgoingHttpHeaders) : undefined
  const startAt = this._startAt
  const startTime = this._startTime
  if (marking) markStart(this)
  let result: unknown
  try {
    result = previous.apply(this, arguments as unknown as unknown[])
  } catch (err) {
    // Refused before on-headers would have called morgan's listener: there the start is marked
    // by the call that succeeds (an app answering 500 instead).
    if (marking && refusedBeforeMark(this, statusCode, copy)) {
      this[MARKED] = undefined
      this._startAt = startAt
      this._startTime = startTime
    }
    throw err
  }
  if (copy !== undefined) {
    // A writeHead put on this response before the logger's (by a middleware that came first) may
    // hand node:http another object than the one it was given (see responseHeader).
    if (previous !== (Object.getPrototypeOf(this) as { writeHead?: unknown } | null)?.writeHead) (copy as GivenHeaders)[PASSED_ON] = true
    this[GIVEN] = copy
  }
  return result
}

function markStart (res: Hooked): void {
  res[MARKED] = true
  recordStartTime.call(res)
}

// The pseudo-headers an HTTP/2 compatibility response's setHeader refuses (it takes others, such
// as :protocol, which only its respond() refuses).
const REQUEST_PSEUDO_HEADERS = new Set([':status', ':method', ':path', ':authority', ':scheme'])

/**
 * Whether on-headers, which sets the status code and then each header (skipping an empty name)
 * on the response before it calls its listener, would have thrown first: node:http's setHeader
 * checks the name and the value; an HTTP/2 compatibility response's refuses a name with a space,
 * some pseudo-headers and a missing value, and its statusCode a code outside 200 to 599.
 */
function refusedBeforeMark (res: ServerResponse, statusCode: unknown, headers: OutgoingHttpHeaders | undefined): boolean {
  const http2 = isHttp2Compat(res)
  if (http2) {
    const code = (statusCode as number) | 0
    if (code < 200 || code > 599) return true
  }
  if (headers === undefined) return false
  try {
    for (const name of Object.keys(headers)) {
      if (name === '') continue
      const value = headers[name]
      if (!http2) {
        validateHeaderName(name)
        validateHeaderValue(name, value as string)
      } else {
        // (it trims and lower-cases the name first)
        const key = name.trim().toLowerCase()
        if (key === '' || key.includes(' ') || REQUEST_PSEUDO_HEADERS.has(key) || value === undefined || value === null) return true
      }
    }
    return false
  } catch {
    return true
  }
}

/**
 * A copy of `headers`. A list of values stays the same array: on-headers sets it on the response
 * as it is, so morgan's line shows what the app pushes to it later.
 */
function copyHeaders (headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const copy: OutgoingHttpHeaders = Object.create(null) as OutgoingHttpHeaders
  for (const name of Object.keys(headers)) copy[name] = headers[name]
  return copy
}

/**
 * The value of response header `name` (as the format writes it) once the headers are written, as
 * morgan reads it: what the response's getHeader gives for it, or else the value given to
 * writeHead (the last of the names that differ only in case).
 */
export function responseHeader (res: ServerResponse, name: string): number | string | string[] | undefined {
  const value = res.getHeader(name)
  if (value !== undefined) return value
  const given = (res as Hooked)[GIVEN]
  if (given === undefined) return undefined
  // node:http sends an object given to writeHead as it is only when the response holds no header
  // of its own; otherwise it sets each one on the response. A name missing there then was taken
  // off on the way (a compression middleware wrapping writeHead drops Content-Length): not sent.
  if (typeof res.getHeaderNames === 'function' && res.getHeaderNames().length !== 0) return undefined
  if (typeof name !== 'string') return undefined
  const lower = name.toLowerCase()
  let found: OutgoingHttpHeader | undefined
  for (const key of Object.keys(given)) {
    if (key === lower || (key.length === lower.length && key.toLowerCase() === lower)) found = given[key]
  }
  // Given to a writeHead that came before the logger's, the object may have reached node:http
  // changed (a value rewritten, a name taken off or added): what was sent is in the head node:http
  // wrote, where it adds some names of its own, which morgan does not see.
  const head = (res as Hooked)._header
  if (given[PASSED_ON] === true && typeof head === 'string' && (found !== undefined || !ADDED_BY_NODE.has(lower))) return sentHeader(head, lower)
  return found
}

/** The headers node:http adds to a head written from an object when the object has none. */
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

/**
 * The value (or values) of header `lower` in `head`, the head of a response as node:http wrote it
 * from an object: that of the last of the names that differ only in case, as setting them one
 * after the other on the response (as on-headers does for morgan) leaves it.
 */
function sentHeader (head: string, lower: string): string | string[] | undefined {
  let values: string[] | undefined
  let spelling = ''
  let at = head.indexOf('\r\n') + 2
  while (at > 1) {
    const end = head.indexOf('\r\n', at)
    if (end === -1 || end === at) break
    const colon = head.indexOf(':', at)
    if (colon !== -1 && colon < end && colon - at === lower.length) {
      const name = head.slice(at, colon)
      if (name.toLowerCase() === lower) {
        const value = head.slice(head.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1, end)
        // a list of values is written as one line each, under one spelling
        if (values === undefined || name !== spelling) values = [value]
        else values.push(value)
        spelling = name
      }
    }
    at = end + 2
  }
  return values === undefined || values.length > 1 ? values : values[0]
}

/** Records the response start (`res._startAt`) when its headers are written. */
export function hookHeaders (res: ServerResponse): void {
  const hooked = res as Hooked
  // Once per response, whatever number of loggers: every one of them reads the same
  // `res._startAt`, and a second hook would make the chain of previous writeHeads loop.
  if (hooked[PREVIOUS] !== undefined) return
  hooked[PREVIOUS] = res.writeHead as WriteHead
  res.writeHead = writeHead as ServerResponse['writeHead']
}

const PREVIOUS_WRITE = Symbol('foyer.logger.write')
const PREVIOUS_END = Symbol('foyer.logger.end')
// Shared by every copy (see GIVEN); also the mark that the response is counted, so that one
// copy's wrappers count it, once.
const BODY_BYTES = Symbol.for('foyer.logger.bodyBytes')
// The end() call in progress on a response, shared too: another copy's emit wrapper may see the
// 'finish' that comes inside it (see countingEnd).
const END_CALL = Symbol.for('foyer.logger.endCall')

interface EndCall {
  readonly chunk: unknown
  readonly encoding: unknown
  /** The connection takes what end() is given (see `usable`). */
  readonly taken: boolean
  /** The chunk was handed to this.write() inside end(), which counted it. */
  passed: boolean
  settled: boolean
}

type Write = (this: ServerResponse, ...args: unknown[]) => unknown

interface Counted extends ServerResponse {
  [PREVIOUS_WRITE]?: Write
  [PREVIOUS_END]?: Write
  [BODY_BYTES]?: number
  [END_CALL]?: EndCall | undefined
  /** node:http's own flag: false for HEAD, 204 and 304, whose body is never sent. */
  _hasBody?: boolean
}

/** The HTTP/2 stream behind a compatibility response. */
interface Http2Counted extends Counted {
  stream: { writableEnded: boolean, destroyed: boolean }
}

// Strings in these encodings are counted by Buffer.byteLength, which is exact only for
// well-formed text: it estimates from the length, while decoding skips what is not base64 (line
// breaks of wrapped base64, for one) and stops hex at the first pair that is not hex. Text that
// is not well-formed is decoded to count it.
const WELL_FORMED: Record<string, RegExp> = {
  base64: /^[A-Za-z0-9+/]*={0,2}$/,
  base64url: /^[A-Za-z0-9\-_]*={0,2}$/,
  hex: /^(?:[0-9A-Fa-f]{2})*$/
}

function stringBytes (chunk: string, encoding: unknown): number {
  if (typeof encoding !== 'string' || !Buffer.isEncoding(encoding)) return Buffer.byteLength(chunk, 'utf8')
  const wellFormed = WELL_FORMED[encoding.toLowerCase()]
  if (wellFormed === undefined || wellFormed.test(chunk)) return Buffer.byteLength(chunk, encoding)
  return Buffer.from(chunk, encoding).byteLength
}

function chunkBytes (chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string') return stringBytes(chunk, encoding)
  // isUint8Array also takes one made in another realm (a vm context), which node sends too.
  if (chunk instanceof Uint8Array || isUint8Array(chunk)) return chunk.byteLength
  return 0
}

// A chunk counts once the connection has taken it (`taken`, told by each wrapper below), and only
// when it is data at all (not the callback end() may get in its place).
function count (res: Counted, chunk: unknown, encoding: unknown, taken: boolean): void {
  if (!taken || chunk === undefined || chunk === null || typeof chunk === 'function') return
  res[BODY_BYTES] = (res[BODY_BYTES] as number) + chunkBytes(chunk, encoding)
}

// node:http takes a chunk unless the response was already ended or destroyed (the write fails),
// its connection was destroyed (node drops the chunk: the response's own 'close' comes a tick
// later, so a chunk written in between, after a timeout or an 'aborted', would count) or no longer
// takes writes (the app ended it: the write fails on the connection), or it has no body (HEAD,
// 204, 304: node drops it). `_hasBody` is only known after the first write stored the headers, so
// it is read after the call.
function usable (res: Counted): boolean {
  const socket = res.socket
  return !res.writableEnded && !res.destroyed && (socket === null || socket === undefined || (!socket.destroyed && socket.writable !== false))
}

function countingWrite (this: Counted, chunk: unknown, encoding?: unknown): unknown {
  const call = this[END_CALL]
  if (call !== undefined && !call.passed && sameData(chunk, encoding, call.chunk, call.encoding)) call.passed = true
  const taken = usable(this)
  const result = (this[PREVIOUS_WRITE] as Write).apply(this, arguments as unknown as unknown[])
  count(this, chunk, encoding, taken && this._hasBody !== false)
  return result
}

// A socket that calls back at once (as serverless adapters' and test injectors' do) makes the
// response emit 'finish' inside end(), before end() returns: the emit wrapper (any copy's) counts
// end()'s chunk there, before it makes the line. An end() replaced before the logger may hand its
// chunk, or a copy of it, to this.write() (light-my-request's does), which counts it: the chunk
// is not counted again. Other writes inside end() (a footer an end() adds) count as any write.
function countingEnd (this: Counted, chunk?: unknown, encoding?: unknown): unknown {
  const call: EndCall = { chunk, encoding, taken: usable(this), passed: false, settled: false }
  const outer = this[END_CALL]
  this[END_CALL] = call
  let result: unknown
  try {
    result = (this[PREVIOUS_END] as Write).apply(this, arguments as unknown as unknown[])
  } finally {
    this[END_CALL] = outer
  }
  settleEnd(this, call)
  return result
}

/** Whether two chunks hold the same bytes (end()'s chunk handed to write(), as it is or copied). */
function sameData (chunk: unknown, encoding: unknown, other: unknown, otherEncoding: unknown): boolean {
  if (chunk === other) return chunk !== undefined && chunk !== null
  const a = bytesOf(chunk, encoding)
  const b = a === undefined ? undefined : bytesOf(other, otherEncoding)
  return a !== undefined && b !== undefined && a.equals(b)
}

/** Counts the chunk of an end() call that took effect, once. */
function settleEnd (res: Counted, call: EndCall): void {
  if (call.settled) return
  call.settled = true
  if (!call.passed) count(res, call.chunk, call.encoding, call.taken && res._hasBody !== false)
}

// An HTTP/2 compatibility response's end() hands its chunk to this.write(), so only write() is
// counted there. Its stream takes the chunk unless it had ended or been destroyed: for HEAD, 204,
// 205 and 304 the headers end it, and the chunk is dropped.
function countingHttp2Write (this: Http2Counted, chunk: unknown, encoding?: unknown): unknown {
  const usable = !this.writableEnded
  const result = (this[PREVIOUS_WRITE] as Write).apply(this, arguments as unknown as unknown[])
  count(this, chunk, encoding, usable && !this.stream.writableEnded && !this.stream.destroyed)
  return result
}

function isHttp2Response (res: ServerResponse): res is Http2Counted {
  return !(res instanceof ServerResponse) && isHttp2Compat(res)
}

/**
 * Counts the body bytes handed to the connection for this response (`:res-bytes`): whatever
 * write() and end() take, in any framing (Content-Length, chunked, or until close), without
 * headers and chunk framing. Installed once per response, and only for loggers whose format
 * may read it.
 */
export function hookBodyBytes (res: ServerResponse): void {
  const counted = res as Counted
  if (counted[BODY_BYTES] !== undefined) return
  if (isHttp2Response(res)) {
    counted[BODY_BYTES] = 0
    counted[PREVIOUS_WRITE] = res.write as Write
    res.write = countingHttp2Write as ServerResponse['write']
  } else if (res instanceof ServerResponse) {
    counted[BODY_BYTES] = 0
    counted[PREVIOUS_WRITE] = res.write as Write
    counted[PREVIOUS_END] = res.end as Write
    res.write = countingWrite as ServerResponse['write']
    res.end = countingEnd as ServerResponse['end']
  }
  // Objects that only imitate a response (test doubles) send nothing and are left as they are,
  // so that a spy on their end() stays in place: `:res-bytes` is `-` for them.
}

/** The body bytes counted for `res`, or undefined when no logger counted them. */
export function bodyBytes (res: ServerResponse): number | undefined {
  const bytes = (res as Counted)[BODY_BYTES]
  // A pipelined response waits, body and all, for the responses before it on its connection; if
  // the connection closed first (from Node.js 24 node then closes the response), it never had
  // the connection and nothing of it was sent. One that had it and finished is detached from it.
  if (bytes !== undefined && bytes !== 0 && res.socket === null && res.destroyed && !res.writableFinished && res instanceof ServerResponse) return 0
  return bytes
}

/** Called once per logger when its response is done, with the values given to `whenDone`. */
export type DoneListener<State, Subject> = (state: State, res: ServerResponse, subject: Subject) => void

type Emit = (this: ServerResponse, ...args: unknown[]) => boolean

const PREVIOUS_EMIT = Symbol('foyer.logger.emit')

type Detach = (this: ServerResponse, socket: unknown) => void

const PREVIOUS_DETACH = Symbol('foyer.logger.detachSocket')
const nodeDetachSocket = ServerResponse.prototype.detachSocket as Detach

const LISTENING_ON = Symbol('foyer.logger.listeningOn')

interface Waiting extends Hooked {
  [PREVIOUS_EMIT]?: Emit
  [PREVIOUS_DETACH]?: Detach
  /** The connection whose 'error' is heard for this response (see listenForFailure). */
  [LISTENING_ON]?: Listened | undefined
}

function isDone (res: ServerResponse): boolean {
  const socket = res.socket
  return res.writableEnded || res.closed || (socket !== null && socket !== undefined && !socket.writable)
}

// Responses that are finishing: from their 'prefinish' (an HTTP/2 compatibility response: from
// its end()) to their 'finish', where their lines are made. If the process ends in between, in a
// callback of res.end() (process.exit(), or an exception nobody catches), 'finish' never comes:
// the exit hook makes their lines before it writes what is held, and so does the end of a log
// stream, which would lose them otherwise. From Node.js 24 the callbacks of res.end() run before
// 'finish' (before morgan's line is made, so morgan loses it), and over HTTP/2 on every version.
// Only the responses their connection has taken whole get their line there: one still sending
// its body (a download an exit cuts short) has not finished, and gets no line at exit, as from
// morgan. Few responses are finishing at once, so the list stays short: a response usually
// leaves from its end, and when the list reaches MAX_FINISHING (one that never finishes nor
// closes stays on it), its oldest is dropped. (A Set, with an add and a delete per response, cost
// about 150 ns per response in-process.)
const finishing: Waiting[] = []
const MAX_FINISHING = 1024
let finishingHooked = false

function makeFinishingLines (): void {
  // (a copy: a response leaves the list as its line is made)
  for (const res of finishing.slice()) {
    if (handedOver(res)) runPending(res)
  }
}

/**
 * Whether all of a finishing response is handed to its connection: so it is in a callback of its
 * end() or a 'finish' listener, and in the turn of an end() whose bytes the connection took at
 * once. For node:http's responses this is what their `writableFinished` tells before Node.js 24;
 * from 24 that is a flag set only just before 'finish'. A response past 'prefinish' has nothing
 * of its own left to write, so what its socket still holds is its own.
 */
function handedOver (res: Waiting): boolean {
  const socket = res instanceof ServerResponse ? res.socket : null
  const held: unknown = socket?.writableLength
  // an HTTP/2 compatibility response, or a socket an adapter made without a writableLength: the
  // response's own word
  if (typeof held !== 'number') return (res as { writableFinished: boolean }).writableFinished
  return held === 0 || passedOnByTls(socket as TlsSocket)
}

interface TlsSocket {
  encrypted?: boolean
  writableBuffer?: unknown[]
  /** The TCP socket under a server's TLS socket. */
  _parent?: { _handle?: { writeQueueSize?: unknown } | null } | null
}

/**
 * A TLS socket calls a write back a turn after it has encrypted it and passed it to the TCP
 * socket under it, and counts it until then: it has gone out when no write waits behind it and
 * that socket's handle queues nothing. (Where node no longer has these, a response ended in the
 * turn that reads this is taken for one still sending.)
 */
function passedOnByTls (socket: TlsSocket): boolean {
  return socket.encrypted === true && socket.writableBuffer?.length === 0 && socket._parent?._handle?.writeQueueSize === 0
}

function noteFinishing (res: Waiting): void {
  if (!finishingHooked) {
    finishingHooked = true
    beforeExitFlush(makeFinishingLines)
  }
  if (finishing.length >= MAX_FINISHING) finishing.shift()
  finishing.push(res)
}

function forgetFinishing (res: Waiting): void {
  const last = finishing.length - 1
  if (finishing[last] === res) {
    finishing.pop()
    return
  }
  const at = finishing.lastIndexOf(res)
  if (at !== -1) finishing.splice(at, 1)
}

// Four entries per logger waiting on a response: listener, state, subject, resource.
function runPending (res: Waiting): void {
  const pending = res[PENDING]
  if (pending === undefined) return
  res[PENDING] = undefined
  const socket = res[LISTENING_ON]
  if (socket !== undefined) stopListening(res, socket)
  if (finishing.length !== 0) forgetFinishing(res)
  for (let i = 0; i < pending.length; i += 4) {
    (pending[i + 3] as AsyncResource).runInAsyncScope(pending[i] as DoneListener<unknown, unknown>, null, pending[i + 1], res, pending[i + 2])
  }
}

// A response emits 'finish' once it has handed all of itself to its connection, and 'close' once:
// after 'finish', or when its connection closes first. The line is made at whichever comes first,
// in the response's own emit, which sees every event of the response before its listeners do,
// rather than in listeners: adding a listener to each response (a new key in its event table,
// through the shared, megamorphic code of EventEmitter) and calling it cost more than looking at
// the few events a response emits ('prefinish', 'finish', 'close'). Made before the 'finish'
// listeners run, the line shows the response as it was sent, whatever a 'finish' listener the app
// added after the logger does (cleaning up req.user, say), as morgan's line, made by its own
// 'finish' listener, does; so does the line of a response no server manages, which may never
// emit 'close' (made by hand on a socket of its own, as serverless adapters and test harnesses
// make them, or the 101 of an 'upgrade' request, detached from its socket for a WebSocket).
function emitWhenDone (this: Waiting, event: unknown): boolean {
  const previous = this[PREVIOUS_EMIT] ?? (ServerResponse.prototype.emit as Emit)
  if (event === 'finish' || event === 'close') {
    if (this[PENDING] !== undefined) {
      const call = (this as Counted)[END_CALL]
      if (call !== undefined && event === 'finish') settleEnd(this, call)
      runPending(this)
    }
  } else if (event === 'prefinish' && this[PENDING] !== undefined) noteFinishing(this)
  return arguments.length === 1 ? previous.call(this, event) : previous.apply(this, arguments as unknown as unknown[])
}

function onFinishedFallback (this: unknown, _err: unknown, res: ServerResponse): void {
  runPending(res as Hooked)
}

const PREVIOUS_FALLBACK_END = Symbol('foyer.logger.fallbackEnd')

interface EndNoted extends Waiting {
  [PREVIOUS_FALLBACK_END]?: Write
}

// HTTP/2 compatibility responses, which wait through on-finished, have no 'prefinish': they are
// noted as finishing when end() takes effect. The callback of an HTTP/2 response's end() runs
// before its 'finish', and the line comes a tick after that: a process that exits in the callback
// gets the line from the exit hook.
function endNotingFinish (this: EndNoted): unknown {
  const endedBefore: boolean = this.writableEnded
  const result = (this[PREVIOUS_FALLBACK_END] as Write).apply(this, arguments as unknown as unknown[])
  if (!endedBefore && isEnded(this) && this[PENDING] !== undefined) noteFinishing(this)
  return result
}

function isEnded (res: ServerResponse): boolean {
  return res.writableEnded
}

function noteFinishingAtEnd (res: EndNoted): void {
  if (res[PREVIOUS_FALLBACK_END] !== undefined || typeof res.end !== 'function') return
  res[PREVIOUS_FALLBACK_END] = res.end as Write
  res.end = endNotingFinish as ServerResponse['end']
}

/**
 * Calls `listener(state, res, subject)` once when `res` is done (finished, or its connection
 * closed), in the async context of this call.
 */
export function whenDone<State, Subject> (res: ServerResponse, listener: DoneListener<State, Subject>, state: State, subject: Subject): void {
  const waiting = res as Waiting
  const resource = new AsyncResource('foyer.logger', RESOURCE_OPTIONS)
  let pending = waiting[PENDING]
  if (pending !== undefined) {
    pending.push(listener, state, subject, resource)
    return
  }
  waiting[PENDING] = pending = [listener, state, subject, resource]
  if (!(res instanceof ServerResponse)) {
    if (isHttp2Response(res)) noteFinishingAtEnd(waiting)
    onFinished(res, onFinishedFallback)
  } else if (isDone(res)) {
    scheduleImmediate(runPending, waiting)
  } else {
    // Once per response: a second wrapper (a response that emitted 'close' by hand before it
    // ended, then met a second logger) would make the chain of previous emits loop.
    if (waiting[PREVIOUS_EMIT] === undefined) {
      waiting[PREVIOUS_EMIT] = res.emit as Emit
      res.emit = emitWhenDone as ServerResponse['emit']
      const detach = res.detachSocket
      if (detach !== nodeDetachSocket) waiting[PREVIOUS_DETACH] = detach as Detach
      res.detachSocket = detachHeard
    }
    const socket: unknown = res.socket
    if (socket !== null && socket !== undefined) listenForFailure(waiting, socket)
    // A pipelined response waiting for its turn gets its connection later: heard from then on,
    // after the 'socket' listeners of the middlewares before the logger, as on-finished hears it.
    else if (socket === null) res.once('socket', onResponseSocket)
  }
}

// An app that takes the connection over from a response still pending (res.detachSocket()) leaves
// a response that will neither finish nor close: node no longer closes it with its connection.
// The line is made when that connection closes, as morgan's is (on-finished hears the socket's
// 'close'), or fails (see listenForFailure). node itself detaches every response once it has
// finished, its line made by then. (Replacing the method on each response, as emit is, cost about
// 13 ns per response in-process, measured over 300,000 responses.)
function detachHeard (this: Waiting, socket: unknown): void {
  ;(this[PREVIOUS_DETACH] ?? nodeDetachSocket).call(this, socket)
  if (this[PENDING] === undefined || typeof socket !== 'object' || socket === null) return
  const closing = socket as { once?: unknown, destroyed?: unknown }
  // (detached by a 'close' listener of the connection's, a listener added now would not be called)
  if (closing.destroyed === true) scheduleImmediate(runPending, this)
  else if (typeof closing.once === 'function') (closing.once as (event: string, listener: () => void) => unknown)('close', () => { runPending(this) })
}

function onResponseSocket (this: Waiting, socket: unknown): void {
  if (this[PENDING] !== undefined && this[LISTENING_ON] === undefined) listenForFailure(this, socket)
}

const HEARD_FOR = Symbol('foyer.logger.heardFor')

interface Listened {
  on: (event: string, listener: () => void) => unknown
  removeListener: (event: string, listener: () => void) => unknown
  /** The response (or responses) this copy of the module hears the connection's 'error' for. */
  [HEARD_FOR]?: Waiting | Waiting[] | undefined
}

// A connection that fails (the client resets it or leaves mid-upload, the server's requestTimeout
// gives up on it) is destroyed with an error: it emits 'error', then 'close'. At 'close' node:http
// emits the request's 'aborted', and an app, or its error handler called by a body parser, may set
// a status and end the response on the dead connection before the response's own 'close'. None of
// that is sent. morgan's line is made at the connection's 'error', by the listener on-finished adds
// for the request when the logger runs (and takes off when the response is done), so it shows the
// response as the 'error' listeners before it left it: no status when no headers were written, or
// the answer of a 'clientError' listener of the server's, or of an on-finished callback of an
// earlier middleware; and not the 413 that body-parser's error handler makes from a listener
// added after it. The line is made by such a listener here too, added as the logger runs (or when
// the response gets its connection) and taken off once the line is made. While it is on, it hears
// the connection's errors as morgan's does (an error no other listener hears is not thrown). It is
// one shared function: adding and taking it off a socket cost 40 to 60 ns in-process (a loop of
// both on a net.Socket holding node:http's own listeners).
// The listener finds its response on the connection, whether or not node:http still links the
// two (an app that took the connection over with res.detachSocket()). A connection usually
// carries one response at a time (a pipelined one gets it once the one before is done, and so once
// its line is made and its listener taken off); when the app detached one that is still pending,
// node gives the connection to the next at once, and both are heard.
function listenForFailure (res: Waiting, socket: unknown): void {
  if (typeof socket !== 'object' || socket === null) return
  const listened = socket as Partial<Listened>
  if (typeof listened.on !== 'function' || typeof listened.removeListener !== 'function') return
  res[LISTENING_ON] = listened as Listened
  const heard = listened[HEARD_FOR]
  listened[HEARD_FOR] = heard === undefined ? res : Array.isArray(heard) ? [...heard, res] : [heard, res]
  listened.on('error', onSocketError)
}

function stopListening (res: Waiting, socket: Listened): void {
  res[LISTENING_ON] = undefined
  const heard = socket[HEARD_FOR]
  if (heard === res) socket[HEARD_FOR] = undefined
  else if (Array.isArray(heard)) {
    const rest = heard.filter((other) => other !== res)
    socket[HEARD_FOR] = rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : rest
  }
  socket.removeListener('error', onSocketError)
}

function onSocketError (this: Listened): void {
  const heard = this[HEARD_FOR]
  if (heard === undefined) return
  for (const res of Array.isArray(heard) ? heard : [heard]) {
    if (res[LISTENING_ON] === this) runPending(res)
  }
}
