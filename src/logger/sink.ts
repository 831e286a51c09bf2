// Getting lines to the destination stream.
//
// - One sink per stream (kept on the stream, so every copy of this module finds it; see SINK),
//   so several loggers writing to one stream share one queue and keep their lines in order.
// - Byte streams (any stream.Writable not in object mode, process.stdout/stderr) have one write at
//   a time: the lines that arrive while a write is in progress wait for it to complete. In the main
//   thread, files, sockets and the standard output get the queued lines joined into one write: the
//   lines of one event-loop turn at least and, under load, everything within BATCH_INTERVAL of the
//   last write (see takesBytes for a worker thread, and nodeFile for a file stream with an fs of its
//   own). A write to a file costs tens of microseconds (stream machinery, thread pool, write(2)):
//   one per line would cost more than making the line. Every chunk holds whole lines, so several
//   processes appending to one file (O_APPEND, one write(2) per chunk) never tear or interleave
//   lines. Other byte streams (a stream in the process, those of a worker thread, a file stream with
//   an fs of its own) get each line in a write() of its own, as from morgan: a Writable of the
//   app's may take each chunk as one record.
// - Lines for streams that only ever write bytes (fs.WriteStream, sockets, process.stdout and
//   stderr, in the main thread) are encoded into a reusable byte buffer as they arrive, instead
//   of being kept as strings until the write. A line is a string built from a dozen pieces; kept
//   for the ~10 ms of a batch, those pieces outlive V8's young-generation collections, which then
//   copy them and grow the young generation to its maximum. Measured on the 'combined' bench
//   server (node --trace-gc, 5 s of load): scavenges of 0.8 ms every 12.5 MB with strings held,
//   0.19 ms every 3.3 MB with bytes (the server without a logger: 0.14 ms every 3.3 MB); RSS
//   after GC 88 MB -> 70 MB (no logger: 60 MB).
// - Anything else (an object-mode stream, or a plain `{ write }` object such as the adapters
//   people write for winston) gets one write per line, synchronously, as morgan does: such
//   writers treat each call as one record.
// - Lines waiting (for the batch being written, or, written one by one, for 'drain' after
//   write() returned false) are bounded by `maxPending` bytes; past the bound they are dropped
//   and counted, and the count is reported once when the stream catches up. A line arriving at
//   an empty queue is always taken: nothing is dropped while the stream keeps up.
// - An 'error' on the stream (EPIPE, ENOSPC, EACCES...) never reaches the process as an
//   uncaught exception: it is reported once, and later lines for that stream, once it is
//   destroyed or errored, are dropped and counted.
// - At process exit ('exit' runs for process.exit(), the end of the event loop, an uncaught
//   exception, and signal handlers that call process.exit()), lines still held here are written
//   synchronously to the file descriptor when the stream is an fs.WriteStream (writing through
//   node's own fs: see nodeFile) or process.stdout/stderr, after whatever the stream itself
//   still buffers, and first what a pipe has not yet taken of the write in progress (see
//   unwrittenRest); other streams get them through write(), which only a synchronous writer
//   completes. A write to a file already in progress in the thread pool may finish after them,
//   or not at all. Signals the process does not handle end it without 'exit': lines of the last
//   few milliseconds are lost, and no handler is installed here, since that would change how the
//   process reacts to the signal (a process busy in a loop would no longer end on it). Writing
//   the standard output every turn instead, to lose fewer, cost 1.21 and 1.23 x the 10 ms window
//   in server CPU per request (median per-round ratio, 6 and 10 rounds, 2026-11-23: a server
//   logging 'combined' to process.stdout redirected to a file, under autocannon's 10
//   connections).
import nodeFs, { WriteStream, openSync, writeSync } from 'node:fs'
import { Socket } from 'node:net'
import { EventEmitter } from 'node:events'
import { Writable } from 'node:stream'
import { isMainThread } from 'node:worker_threads'
import { flattened } from './flat.js'
import { monotonicMs, nodeTimersAtHand, scheduleImmediate, scheduleTimeout } from './timers.js'

/** What a logger writes to: a stream, or any object with a `write` method. */
export interface LogStream {
  write (chunk: string | object): unknown
  /** When true and a format returns an object, the object is written as-is. */
  readonly writableObjectMode?: boolean | undefined
}

/** The per-logger side of a sink: its bound on queued bytes and its count of dropped lines. */
export interface Owner {
  readonly maxPending: number
  dropped: number
}

/** Where a logger's lines go: a sink, or the legacy interval buffer in front of one. */
export interface Output {
  /**
   * Queues `line`; with `endLine`, a text line that still needs its newline. `lines` is how many
   * log lines it holds (the deprecated `buffer` joins an interval's lines into one), 1 by default.
   */
  push: (line: unknown, owner: Owner, endLine?: boolean, lines?: number) => void
}

interface Flushable {
  flushSync: () => void
  /** For a buffer in front of a sink: whether its lines go to `sink`. */
  feeds?: (sink: object) => boolean
  flush?: () => void
}

interface EventSource {
  on?: (event: string, listener: (arg?: unknown) => void) => unknown
  once?: (event: string, listener: () => void) => unknown
  destroyed?: boolean
  fd?: unknown
  pending?: boolean
  path?: unknown
  flags?: unknown
  mode?: unknown
  writableBuffer?: Array<{ chunk: unknown, encoding: string }>
}

interface Shared {
  readonly sinks: WeakMap<object, Sink>
  /** Sinks and buffers holding lines: what the exit hook flushes. */
  readonly holding: Set<Flushable>
  exitHooked: boolean
  /** Run by the exit hook before it flushes: they make the lines still owed (see `beforeExitFlush`). */
  lineMakers?: Array<WeakRef<() => void> | (() => void)>
}

const SHARED = Symbol.for('foyer.logger.sinks')
const shared: Shared = ((globalThis as { [SHARED]?: Shared })[SHARED] ??= { sinks: new WeakMap(), holding: new Set(), exitHooked: false })

// Objects written to an object-mode stream have no byte size; each counts as this much.
const OBJECT_SIZE = 1024
// A byte stream gets at most one write per BATCH_INTERVAL ms, or sooner once BATCH_BYTES wait.
// Other sizes measured side by side with these on the 'combined' bench server (10 rounds, median
// per-round ratio of server CPU per request to this build): writing every 16 kB instead, 1.07;
// every 4 kB, 1.17; every 50 or 100 ms (a write every 256 kB at that load), 1.00 and 0.99.
// Smaller batches cost more; longer ones save nothing and hold lines longer.
const BATCH_INTERVAL = 10
const BATCH_BYTES = 256 * 1024

/**
 * What a warning says of a thrown value. Whatever it is (an object with no prototype, which
 * String() refuses, or a Proxy or getter that throws), describing it never throws: the warning is
 * given where an exception would take the server down.
 */
export function reasonOf (err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err)
  } catch {
    return 'a value that cannot be shown'
  }
}

function warn (message: string, code: string): void {
  process.emitWarning(`foyer/logger: ${message}`, { type: 'FoyerWarning', code })
}

function hookExit (): void {
  if (!shared.exitHooked) {
    shared.exitHooked = true
    // First among the 'exit' listeners: morgan has written its lines before the process exits,
    // so an exit handler the app registered earlier still runs after them.
    process.prependListener('exit', flushAllSync)
  }
}

function hold (item: Flushable): void {
  shared.holding.add(item)
  hookExit()
}

/**
 * Registers `makeLines`, which the exit hook calls before it writes what is held, and so does a
 * log stream's end() or destroy(): for lines owed to responses that finished but whose line is
 * not made yet. The hook is installed now: a listener added while 'exit' is being emitted would
 * not run.
 */
export function beforeExitFlush (makeLines: () => void): void {
  // Held weakly, and those of copies that are gone dropped: a copy of this module unloaded since
  // (a hot reload that clears require's cache) is not kept alive for its exit work.
  const makers = (shared.lineMakers ??= [])
  for (let i = makers.length - 1; i >= 0; i--) {
    if (lineMaker(makers[i]) === undefined) makers.splice(i, 1)
  }
  makers.push(new WeakRef(makeLines))
  hookExit()
}

function lineMaker (held: WeakRef<() => void> | (() => void) | undefined): (() => void) | undefined {
  return typeof held === 'function' ? held : held?.deref()
}

function makeOwedLines (): void {
  for (const held of shared.lineMakers ?? []) {
    try { lineMaker(held)?.() } catch { /* the process is exiting: nothing left to report to */ }
  }
}

function flushAllSync (): void {
  makeOwedLines()
  // A buffer flushing into its sink adds the sink to the set; Set iteration visits it too.
  for (const item of shared.holding) {
    try { item.flushSync() } catch { /* the process is exiting: nothing left to report to */ }
  }
  shared.holding.clear()
}

// A line's size is its length: the bytes it takes in memory (two per character above U+00FF)
// and in a file (UTF-8) differ from it for non-ASCII text, by at most a factor of three.
// Counting exact bytes would flatten every line once more, on the hot path.
function sizeOf (line: unknown): number {
  return typeof line === 'string' ? line.length : OBJECT_SIZE
}

/** A line as text, converted as `line + ''` would (what morgan's `line + '\\n'` did). */
function asText (line: unknown): string {
  return typeof line === 'string' ? line : (line as string) + ''
}

function flushSoon (sink: Sink): void {
  sink.flush()
}

// How long after its 'close' a stream may still call back a write (see Sink.closed).
const CLOSE_GRACE = 1000

function settleClosed (sink: Sink): void {
  sink.closedLong()
}

// A pipe takes a write of at most this many bytes whole or not at all (POSIX PIPE_BUF).
const PIPE_BUF = 4096

// How long a write at exit waits for a full pipe to take more of its lines. Each try that finds
// no room sleeps 1 ms rather than spinning: retrying at once 10,000 times, as this did before,
// kept a core busy for 262 ms whenever the reader had stalled. The process is exiting: a reader
// that has taken nothing for this long may never read again, and waiting longer delays the exit
// (morgan, whose lines wait in libuv's queue, waits for none). One that goes on taking lines is
// waited for, but not past EXIT_WAIT_ALL from the first wait, for every pipe of the process
// together: a slow reader (a log shipper holding back, a slow link) would otherwise hold the
// exit, and the app's own 'exit' listeners behind it, for as long as the lines held take to
// drain (18 MB at about 45 kB/s: minutes), past the grace period of a supervisor that then kills
// the process anyway.
const EXIT_WAIT = 100
const EXIT_WAIT_ALL = 1000
const PAUSE = new Int32Array(new SharedArrayBuffer(4))
/** When the waits at exit end, once one began (see EXIT_WAIT_ALL). */
let exitWaitEnds: number | undefined

/** A write at exit that gave up: `written` bytes of the data, whole lines, went out. */
export class PartlyWritten extends Error {
  readonly code: string
  readonly written: number
  constructor (cause: NodeJS.ErrnoException, written: number) {
    super(cause.message)
    this.code = cause.code ?? 'EAGAIN'
    this.written = written
  }
}

/**
 * Writes `data`, whole lines of text, to `fd`, in pieces of whole lines of at most PIPE_BUF bytes
 * (a longer line goes alone): a full non-blocking pipe that never takes the rest (the process is
 * exiting) then gets whole lines only, never the start of one. A pipe takes such a piece whole or
 * not at all (EAGAIN), even when it has room for some of its lines: the piece is then cut short
 * at a line end, down to one line, so the lines that fit go out. When not even one fits, the
 * pipe is given EXIT_WAIT ms to take more (and all the pipes of the exit EXIT_WAIT_ALL ms in
 * all), then a PartlyWritten is thrown. At `position` when it is a number (a file stream opened
 * with `start` writes at positions of its own, which leave the descriptor's offset where it was);
 * the position after the data is returned.
 */
export function writeAllSync (fd: number, data: Buffer, position: number | null = null): number | null {
  let offset = 0
  let deadline: number | undefined
  while (offset < data.length) {
    let end = data.length
    if (end - offset > PIPE_BUF) {
      const newline = data.lastIndexOf(0x0a, offset + PIPE_BUF - 1)
      end = newline >= offset ? newline + 1 : lineEnd(data, offset + PIPE_BUF)
    }
    while (offset < end) {
      try {
        offset += writeSync(fd, data, offset, end - offset, position === null ? null : position + offset)
        // a reader that takes what it is given, however slowly, is waited for
        deadline = undefined
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err
        // (a piece longer than PIPE_BUF, one line, may have gone out in part: it is not cut)
        const shorter = end - offset <= PIPE_BUF ? data.lastIndexOf(0x0a, end - 2) : -1
        if (shorter >= offset) { end = shorter + 1; continue }
        const now = monotonicMs()
        deadline ??= now + EXIT_WAIT
        exitWaitEnds ??= now + EXIT_WAIT_ALL
        if (now >= deadline || now >= exitWaitEnds) throw new PartlyWritten(err as NodeJS.ErrnoException, offset)
        Atomics.wait(PAUSE, 0, 0, 1)
        // the pipe may have room for the whole piece again
        break
      }
    }
  }
  return position === null ? null : position + data.length
}

/** The end of the line going on at `from`: after its newline, or the end of `data`. */
function lineEnd (data: Buffer, from: number): number {
  const newline = data.indexOf(0x0a, from)
  return newline === -1 ? data.length : newline + 1
}

// The byte buffer lines are encoded into: a batch and then some, so one write needs no copy
// (a line that does not fit whole starts a new buffer); two alternate, one being written while
// the other fills.
const SLAB_SIZE = BATCH_BYTES + 64 * 1024
// No character takes more than three bytes in any encoding a string is written in (UTF-8 at
// most, for a UTF-16 code unit).
const MAX_BYTES_PER_CHAR = 3

function newlineIsByte (encoding: string): boolean {
  return encoding === 'utf8' || encoding === 'utf-8' || encoding === 'latin1' || encoding === 'binary' || encoding === 'ascii'
}

/**
 * The lines of a batch for a byte stream, already encoded. Lines fill a buffer; a line that
 * does not fit closes it and starts another. Taking the batch gives one Buffer: the buffer
 * itself (a view of its used part) when one holds everything, else the buffers joined. A
 * buffer handed to the stream is reused once the stream says it wrote it.
 */
class ByteBatch {
  encoding: BufferEncoding
  /** The encoding writes a newline as the one byte 0x0a. */
  private newlineByte: boolean
  private slab: Buffer | undefined
  private used = 0
  private readonly full: Buffer[] = []
  private spare: Buffer | undefined
  /** Bytes held. */
  size = 0

  constructor (encoding: BufferEncoding) {
    this.encoding = encoding
    this.newlineByte = newlineIsByte(encoding)
  }

  /** Lines added from now on are encoded in `encoding`; those already held keep theirs. */
  setEncoding (encoding: BufferEncoding): void {
    this.encoding = encoding
    this.newlineByte = newlineIsByte(encoding)
  }

  /**
   * Encodes `line`, followed by a newline when `endLine` is set, at the end of the batch;
   * returns its size in bytes.
   */
  add (line: string, endLine: boolean): number {
    if (endLine && !this.newlineByte) return this.add(line + '\n', false)
    const newline = endLine ? 1 : 0
    const wanted = line.length * MAX_BYTES_PER_CHAR + newline
    let slab = this.slab
    if (slab === undefined || this.used + wanted > slab.length) {
      if (slab !== undefined && this.used > 0) this.full.push(slab.subarray(0, this.used))
      if (wanted > SLAB_SIZE) {
        // A line longer than a buffer gets one of its own.
        const own = Buffer.from(endLine ? line + '\n' : line, this.encoding)
        this.full.push(own)
        this.slab = undefined
        this.used = 0
        this.size += own.length
        return own.length
      }
      slab = this.spare ?? Buffer.allocUnsafeSlow(SLAB_SIZE)
      this.spare = undefined
      this.slab = slab
      this.used = 0
    }
    let bytes = slab.write(line, this.used, this.encoding)
    if (endLine) slab[this.used + bytes++] = 0x0a
    this.used += bytes
    this.size += bytes
    return bytes
  }

  /** Everything held, as one Buffer; the batch is empty afterwards. */
  take (): Buffer | undefined {
    if (this.size === 0) return undefined
    let data: Buffer
    if (this.full.length === 0) {
      data = (this.slab as Buffer).subarray(0, this.used)
    } else {
      if (this.slab !== undefined && this.used > 0) this.full.push(this.slab.subarray(0, this.used))
      data = Buffer.concat(this.full, this.size)
    }
    // a buffer begun but left empty serves the next batch
    if (this.slab !== undefined && this.used === 0) this.spare ??= this.slab
    this.clear()
    return data
  }

  /** `data`, taken from this batch, has been written: its memory may hold the next lines. */
  release (data: Buffer): void {
    if (data.buffer.byteLength === SLAB_SIZE && data.byteOffset === 0 && this.spare === undefined) {
      this.spare = Buffer.from(data.buffer, 0, SLAB_SIZE)
    }
  }

  /** Forgets everything held. */
  clear (): void {
    this.full.length = 0
    this.slab = undefined
    this.used = 0
    this.size = 0
  }
}

/**
 * Whether `stream` turns every chunk into bytes and keeps none after its write callback: then
 * lines can be encoded as they come and the memory reused. Other Writables (a PassThrough, a
 * Transform, a stream with `decodeStrings: false`) may keep or look at the chunks they get, and
 * keep receiving strings.
 */
function takesBytes (stream: LogStream): boolean {
  // A worker thread that is terminated (worker.terminate(), or its process exiting) runs no exit
  // hook: lines a batch still held would be lost, not even counted, where morgan had handed each
  // to the stream at once (of five lines logged to a file or a socket just before terminate(),
  // 4 or 5 of morgan's reached it, 1 of a batch's, on Node.js 20, 22 and 24). So in a worker,
  // every stream is written to as a stream in the process is: each line at once (see takesMore).
  // Its standard output and error have no system call to spread over a batch anyway: they pass
  // each chunk to the main thread.
  return isMainThread && (nodeFile(stream) || stream instanceof Socket || stream === process.stdout || stream === process.stderr)
}

/**
 * Whether `stream` is an fs.WriteStream that writes through node's own fs. One made with an `fs`
 * option of its own (an in-memory file system such as memfs, or a virtual one) has a descriptor
 * that means nothing to node: written to with writeSync it fails (EBADF), or, if the number
 * happens to be a real open descriptor, writes into an unrelated file; opened with openSync it
 * creates a real file. Such a stream is written to as a stream in the process is (see
 * takesBytes): each line is handed to its write() at once, as morgan does, so a custom fs whose
 * write is synchronous has it as the process exits, as it has morgan's; at exit, lines that waited
 * behind a write in progress are handed to write() too. Node keeps the option, or its own fs
 * when none is given, under a symbol described as 'kFs' (Node.js 20 to 26); a stream without
 * one is taken to use node's fs. A stream made from a FileHandle (filehandle.createWriteStream(),
 * or the `fd` option given one) has there the handle's own operations, over a real descriptor.
 */
function nodeFile (stream: object): boolean {
  if (!(stream instanceof WriteStream)) return false
  const own = stream as unknown as Record<symbol, unknown>
  let fs: unknown
  for (const key of Object.getOwnPropertySymbols(stream)) {
    // A stream made from a FileHandle of fs.promises writes to that handle's real descriptor.
    if (key.description === 'kHandle' && typeof (own[key] as { fd?: unknown } | null | undefined)?.fd === 'number') return true
    if (key.description === 'kFs') fs = own[key]
  }
  // node's own fs given as the option in another shape (`import * as fs`, a spread copy) writes
  // with node's own write
  return fs === undefined || fs === nodeFs || (fs as { write?: unknown } | null)?.write === nodeFs.write
}

/** Whether text in `encoding` decodes differently joined than line by line. */
function perLineEncoding (encoding: string): boolean {
  return encoding === 'base64' || encoding === 'base64url' || encoding === 'hex'
}

/** The encoding strings written to `stream` get: its default encoding, utf8 unless set. */
function encodingOf (stream: LogStream): BufferEncoding {
  const state = (stream as { _writableState?: { defaultEncoding?: unknown } })._writableState
  const encoding = state?.defaultEncoding
  return typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8'
}

function toBuffer (chunk: unknown, encoding: string): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  return Buffer.from(String(chunk), Buffer.isEncoding(encoding) ? encoding : 'utf8')
}

// Every stream node makes (files, sockets, pipes, the standard output, PassThrough...) writes
// through Writable.prototype.write, which calls back once a chunk is written and leaves the chunk
// alone afterwards. A write() replaced on a stream (a subclass's own, or a patch a test puts on
// process.stdout to capture the output) may do neither: a batch waiting for its callback would
// hold every later line, and a reused buffer would change under a chunk kept. Such a stream gets
// its lines at once (see push()), as text, and each write counts as done once the call returns,
// as morgan's lines do.
const WRITABLE_WRITE = Writable.prototype.write

/** Whether `stream`'s write() is not node's own (see WRITABLE_WRITE). */
function hasOwnWrite (stream: LogStream): boolean {
  return stream.write !== WRITABLE_WRITE
}

/**
 * The lines of a write not called back yet, other than the batch in flight: a batch handed to the
 * stream ahead of its end() or destroy(), or a line of a list written ahead of its last.
 */
interface HeldWrite {
  readonly owners: Owner | Owner[]
  readonly counts: number | number[]
  /** The callback given to the write, by which node's buffer of a stream holds it. */
  callback?: unknown
}

/**
 * The lines of the write of `data` that is given the callback: the last line's, for a list of
 * lines written one by one (see send), or else all of them.
 */
function lastWriteOf (data: unknown, owners: Owner | Owner[], counts: number | number[]): HeldWrite {
  if (!Array.isArray(data) || !Array.isArray(owners) || !Array.isArray(counts)) return { owners, counts }
  return { owners: owners[owners.length - 1] as Owner, counts: counts[counts.length - 1] as number }
}

/** Whether `stream` is one lines are written to synchronously at exit (see exitDescriptor). */
function writtenAtExit (stream: object): boolean {
  return stream === process.stdout || stream === process.stderr || nodeFile(stream)
}

/**
 * The file descriptor lines can be written to synchronously at exit, if there is one, for a
 * stream that is written to at exit (see writtenAtExit).
 */
function exitDescriptor (stream: EventSource): number | undefined {
  if (typeof stream.fd === 'number' && stream.fd >= 0) return stream.fd
  // A file stream still opening: its open, held up behind other work of node's thread pool,
  // has not run yet, so open it here. (Node's thread pool still carries that open out as the
  // process ends: one that truncates the file, as the default flags 'w' do, empties it again
  // after the lines are written. Nothing here can stop it.)
  const file: EventSource = stream
  if (stream instanceof WriteStream && file.pending === true && (typeof file.path === 'string' || Buffer.isBuffer(file.path))) {
    const flags = typeof file.flags === 'string' || typeof file.flags === 'number' ? file.flags : 'w'
    const mode = typeof file.mode === 'number' ? file.mode : 0o666
    try { return openSync(file.path, flags, mode) } catch { return undefined }
  }
  return undefined
}

const NEWLINE = Buffer.from('\n')

/** How many newlines `data` holds from `from` on. */
function newlinesIn (data: Buffer, from: number): number {
  let n = 0
  for (let i = data.indexOf(0x0a, from); i !== -1; i = data.indexOf(0x0a, i + 1)) n++
  return n
}

/** Bytes written at exit (see flushSync), and the owners of their lines when they are a sink's. */
interface ExitPiece {
  readonly data: Buffer
  readonly owners: Owner | Owner[] | undefined
  readonly counts: number | number[] | undefined
  /** Written at the file stream's position, when it has one. */
  readonly positioned: boolean
}

/**
 * What a pipe or socket (the standard output as a pipe) has not yet taken of the write in
 * progress: libuv holds it and, the process exiting, never writes it. When that write is
 * `batch`, the batch's last bytes, so its lines reach the pipe whole; when it is another
 * writer's (or several chunks node writes together), a newline if part of it went out, so the
 * lines written at exit do not run on from that part.
 */
function unwrittenRest (stream: EventSource, batch: Buffer | undefined, buffered: Array<{ chunk: unknown }> | undefined): Buffer | undefined {
  const handle = (stream as { _handle?: { writeQueueSize?: unknown } | null })._handle
  const left = handle?.writeQueueSize
  if (typeof left !== 'number' || left <= 0) return undefined
  const state = (stream as { _writableState?: { writing?: unknown, writelen?: unknown } })._writableState
  // (a batch still waiting in the stream's buffer is behind another writer's write)
  const inProgress = batch !== undefined && buffered?.some((entry) => entry.chunk === batch) !== true
  if (inProgress && state?.writing === true && state.writelen === batch.length && left <= batch.length) {
    return batch.subarray(batch.length - left)
  }
  // (nothing of it went out: no line was cut)
  if (typeof state?.writelen === 'number' && left >= state.writelen) return undefined
  return NEWLINE
}

export class Sink implements Output, Flushable {
  readonly stream: LogStream
  /** A byte stream: one write at a time, the lines that come meanwhile held (see takeBatch). */
  private readonly batched: boolean
  /** For streams that take bytes: the queued lines, encoded. Otherwise they wait in `queue`. */
  private readonly bytes: ByteBatch | undefined
  /** The stream's own state, where its current default encoding is. */
  private readonly writableState: { defaultEncoding?: unknown } | undefined
  /** The buffer being written, to reuse once written. */
  private writing: Buffer | undefined
  private readonly canWait: boolean
  private queue: unknown[] = []
  /**
   * The owners of the queued lines, in order, and how many lines each entry stands for: a run of
   * consecutive lines of one logger is one entry in a batched sink (an array push per line was a
   * builtin call per line), one line per entry otherwise, where lines are written one by one.
   */
  private owners: Owner[] = []
  private counts: number[] = []
  private queuedBytes = 0
  /** A flush is scheduled (setImmediate or timer). */
  private scheduled = false
  /** A batch was handed to the stream and its write has not completed. */
  private inFlight = false
  /** At exit, what the stream itself still held was written (see flushSync). */
  private exitFlushed = false
  /** Lines are written to the stream's file descriptor at exit (see writtenAtExit). */
  private readonly atExit: boolean
  /** The descriptor lines were written to at exit: a file still opening is opened once. */
  private exitFd: number | undefined
  /** write() returned false: nothing more until 'drain'. */
  private waiting = false
  private lastWrite = Number.NEGATIVE_INFINITY
  private dead = false
  private failureReported = false
  /** An error the sink went on after (a write that threw, an 'error' on a working stream) was reported. */
  private hiccupReported = false
  /** The owners of the batch being written, and their counts: dropped if its write fails. */
  private writingOwners: Owner | Owner[] | undefined
  private writingCounts: number | number[] | undefined
  /** Lines dropped since the last report. */
  private unreported = 0
  /**
   * The chunks the stream still held, not yet writing them, when the app destroyed it itself,
   * without an error (see `overtaken`); undefined while it has not.
   */
  private bufferedAtDestroy: Set<unknown> | undefined
  /** The writes not called back yet besides the batch in flight (see HeldWrite). */
  private readonly heldWrites = new Set<HeldWrite>()
  /** How many lines of the list being sent were handed to the stream (see countUnsent). */
  private sent = 0
  private readonly onDrain: () => void
  private readonly onWritten: (err?: unknown) => void

  constructor (stream: LogStream) {
    this.stream = stream
    const bytes = takesBytes(stream)
    const encoding = encodingOf(stream)
    // A stream decoding text as base64 or hex decodes each of morgan's lines on its own, which
    // lines joined would not reproduce: unless the lines are encoded here, one by one, it gets
    // them one by one, as from morgan.
    this.batched = stream.writableObjectMode !== true && (stream instanceof Writable || stream === process.stdout || stream === process.stderr) &&
      (bytes || !perLineEncoding(encoding))
    this.bytes = this.batched && bytes ? new ByteBatch(encoding) : undefined
    this.writableState = (stream as { _writableState?: { defaultEncoding?: unknown } })._writableState
    this.atExit = writtenAtExit(stream)
    // Only an EventEmitter has 'error', 'close' and 'drain' to listen to: another object's `on`
    // or `once` may mean anything.
    this.canWait = stream instanceof EventEmitter
    this.onDrain = () => { this.drained() }
    this.onWritten = (err) => { this.written(err) }
    if (stream instanceof EventEmitter) {
      // Without a listener, an 'error' on the stream would be thrown as an uncaught exception.
      // A node stream that fails is destroyed, or errored (without autoDestroy), by the time its
      // 'error' is emitted: nothing more can be written to it. An 'error' that leaves the stream
      // neither (one the app or a library emits on a stream that still works) is reported, and
      // lines go on to it, as morgan's do; a write that then fails is caught as any other.
      // The standard output and error never look destroyed (node undoes it): an 'error' there is
      // always a failed write.
      stream.on('error', (err: unknown) => {
        // the app's own destroy(): what it cut short is settled by the callback of the batch's
        // write (one writing line by line, or to a replaced write(), has none), and a line that
        // comes later meets a destroyed stream in write()
        if (this.batched && !hasOwnWrite(stream) && this.overtaken(err)) return
        const state = stream as { destroyed?: unknown, writableErrored?: unknown }
        if (state.destroyed === true || (state.writableErrored !== undefined && state.writableErrored !== null) ||
          stream === process.stdout || stream === process.stderr) {
          if (state.destroyed === true) this.lostBuffered(false)
          this.fail(err)
        } else {
          this.reportHiccup(`the log stream emitted an error (${reasonOf(err)}) but is still open: lines still go to it`)
        }
      })
      stream.on('close', () => { this.closed() })
    }
    holdLinesAtEnd(stream)
  }

  push (item: unknown, owner: Owner, endLine = false, lines = 1): void {
    const line = endLine ? asText(item) : item
    if (this.dead) { owner.dropped += lines; return }
    if (!this.batched && !this.waiting) { this.write(endLine ? (line as string) + '\n' : line, owner, lines); return }
    if (this.inFlight && this.bytes === undefined && this.owners.length === 0 && this.takesMore()) {
      this.writeAlongside(endLine ? (line as string) + '\n' : line as string, owner, lines)
      return
    }
    const size = sizeOf(line) + (endLine ? 1 : 0)
    // The bound applies to what waits for the stream: a line arriving at an empty queue is always
    // taken, and lines that only wait for the batch to be written go out now rather than push a
    // line past the bound, so nothing is dropped while the stream keeps up.
    if (this.queuedBytes > 0 && this.queuedBytes + size > owner.maxPending) {
      if (this.batched && !this.waiting && !this.inFlight) this.flush()
      // (that write may have found the stream ended or destroyed)
      if (this.dead) { owner.dropped += lines; return }
      if (this.queuedBytes > 0 && this.queuedBytes + size > owner.maxPending) {
        owner.dropped += lines
        this.unreported += lines
        return
      }
    }
    const bytes = this.bytes
    if (bytes !== undefined) {
      // Encoded as the stream would encode it now, as morgan's line is: an app may change the
      // stream's default encoding (setDefaultEncoding) after the logger was made.
      const encoding = this.writableState?.defaultEncoding
      if (encoding !== bytes.encoding && typeof encoding === 'string' && Buffer.isEncoding(encoding)) bytes.setEncoding(encoding)
      this.queuedBytes += bytes.add(line as string, endLine)
    } else {
      const queued = endLine ? (line as string) + '\n' : line
      // Held flat: a line made by concatenation (a format of many tokens) is a tree of its
      // pieces, and held as one it takes up to 20 times its length, past what maxPending counts.
      this.queue.push(typeof queued === 'string' ? flattened(queued) : queued)
      this.queuedBytes += size
    }
    // A sink holding lines is in the exit hook's set (held from its first line until it is empty)
    const owners = this.owners
    const last = owners.length - 1
    if (last === -1) hold(this)
    if (this.bytes !== undefined && last !== -1 && owners[last] === owner) {
      this.counts[last] = (this.counts[last] as number) + lines
    } else {
      owners.push(owner)
      this.counts.push(lines)
    }
    if (this.waiting || this.inFlight) return
    // A replaced write() (a spy a test puts on process.stdout) gets each line at once, as from
    // morgan: the test looks for it as soon as its request is answered, and may put the
    // stream's own write() back right after. So does a stream in the process (see schedule), and
    // any stream while a test's fake timers are all there is (see timers.ts).
    if (this.bytes === undefined || this.queuedBytes >= BATCH_BYTES || hasOwnWrite(this.stream) || !nodeTimersAtHand()) this.flush()
    else this.schedule()
  }

  /** A write that threw lost its lines only: the stream may accept the next ones. */
  private reportThrown (err: unknown): void {
    this.reportHiccup(`a write to the log stream threw (${reasonOf(err)}): its lines were dropped and counted in the middleware's \`dropped\`; later lines still go to the stream`)
  }

  /**
   * Whether a stream in the process (see schedule) takes a line now, beside the write in
   * progress: one whose buffer is under its highWaterMark, that still takes writes, and whose
   * write() is node's own. It then gets the line at once, as from morgan: output the app writes to
   * the same stream after the line (from a 'finish' listener of its own, say) comes after it, as
   * it does with morgan, and not before it, as it would if the line waited for the write in
   * progress to complete. What the stream holds stays bounded by its highWaterMark; past it,
   * lines wait here, within maxPending.
   */
  private takesMore (): boolean {
    const stream = this.stream as LogStream & { writableLength?: unknown, writableHighWaterMark?: unknown, writableEnded?: unknown, destroyed?: unknown }
    // (not writableNeedDrain: once set, it stays set until the stream is empty, which a stream
    // that keeps a backlog under steady traffic may never be again)
    const length = stream.writableLength
    const highWaterMark = stream.writableHighWaterMark
    return typeof length === 'number' && typeof highWaterMark === 'number' && length < highWaterMark &&
      stream.writableEnded !== true && stream.destroyed !== true && !hasOwnWrite(stream)
  }

  /** Hands `chunk`, a line of `owner`'s (`lines` lines), to the stream now (see takesMore). */
  private writeAlongside (chunk: string, owner: Owner, lines: number): void {
    try {
      this.writeTracked(chunk, { owners: owner, counts: lines })
    } catch (err) {
      owner.dropped += lines
      this.reportThrown(err)
    }
  }

  /**
   * Writes `chunk`, the lines of `held`, with a callback of its own that settles them (see
   * settleHeld). A write that throws is forgotten (its lines are counted by the caller, not again
   * once the stream has closed: see closedLong), and the error passed on.
   */
  private writeTracked (chunk: string, held: HeldWrite): void {
    this.heldWrites.add(held)
    const calledBack = (err?: unknown): void => { this.settleHeld(held, chunk, err, calledBack) }
    held.callback = calledBack
    try {
      (this.stream as Writable).write(chunk, calledBack)
    } catch (err) {
      this.heldWrites.delete(held)
      throw err
    }
  }

  /** Writes what is queued, unless the stream is busy; the busy stream's completion calls back. */
  flush (): void {
    this.scheduled = false
    if (this.waiting || this.inFlight || this.dead) return
    const owners = this.owners
    const counts = this.counts
    if (owners.length === 0) { shared.holding.delete(this); return }
    if (this.batched) {
      const data = this.takeBatch()
      // Lines that encode to no bytes (text in a stream whose default encoding is hex): nothing to
      // write, as morgan's writes of them write nothing.
      if (data === undefined) { shared.holding.delete(this); return }
      // an encoded buffer is reused once written
      if (this.bytes !== undefined) this.writing = data as Buffer
      this.write(data, owners, counts)
    } else {
      const queue = this.takeQueue()
      for (let i = 0; i < queue.length; i++) {
        this.write(queue[i], owners[i] as Owner, counts[i] as number)
        if (this.waiting || this.dead) {
          // Stopped again: keep the rest, in order, ahead of anything newer.
          for (let j = i + 1; j < queue.length; j++) this.queuedBytes += sizeOf(queue[j])
          this.queue = queue.slice(i + 1).concat(this.queue)
          this.owners = owners.slice(i + 1).concat(this.owners)
          this.counts = counts.slice(i + 1).concat(this.counts)
          if (this.dead) this.dropQueued()
          return
        }
      }
    }
    this.release()
  }

  /**
   * Leaves the exit hook's set once nothing of this sink's is left: no line held, and, for a
   * stream written to at exit, no batch being written (what a pipe has not yet taken of it is
   * written then: see flushSync). Another stream's write may never be called back.
   */
  private release (): void {
    if (this.owners.length === 0 && (!this.inFlight || !this.atExit)) shared.holding.delete(this)
  }

  flushSync (): void {
    const stream = this.stream as LogStream & EventSource
    // (what the app destroyed the stream with is not written either)
    if (this.dead || stream.destroyed === true) return
    if (!this.batched) {
      this.writeEach()
      return
    }
    const owners = this.owners
    const counts = this.counts
    const fd = hasOwnWrite(stream) || !this.atExit ? undefined : (this.exitFd ??= exitDescriptor(stream))
    const taken = owners.length === 0 ? undefined : this.takeBatch(fd !== undefined)
    if (fd === undefined || Array.isArray(taken)) {
      // as any other batch: the lines as text, or the bytes the sink encoded in the stream's
      // encoding; counted as dropped if the stream throws, as in flush and writeHeld (of a list,
      // the line that threw and those after it)
      if (taken === undefined) return
      try {
        this.send(taken, undefined, owners, counts)
      } catch (err) {
        this.countUnsent(owners, counts)
        this.report(err)
      }
      return
    }
    // nothing of this sink's left to write (its last batch was written)
    if (taken === undefined && !this.inFlight) return
    // What the stream still buffers was written before these lines: keep the order. Once: the
    // sink may be flushed twice at exit (by the `buffer` option's flush, then by the exit hook).
    const first = !this.exitFlushed
    this.exitFlushed = true
    const rest = first ? unwrittenRest(stream, this.writing, stream.writableBuffer) : undefined
    const earlier = first ? stream.writableBuffer ?? [] : []
    const pos = (stream as { pos?: unknown }).pos
    let position = stream instanceof WriteStream && typeof pos === 'number' ? pos : null
    // Each piece in order, with the owners of its lines when they are this sink's: the rest of
    // the batch in progress, a batch of this sink's waiting in the stream behind another writer's
    // write, and the lines held here.
    const batch = this.writing
    const pieces: ExitPiece[] = []
    if (rest !== undefined) pieces.push({ data: rest, owners: rest === NEWLINE ? undefined : this.writingOwners, counts: this.writingCounts, positioned: false })
    for (const { chunk, encoding } of earlier) pieces.push({ data: toBuffer(chunk, encoding), owners: chunk === batch ? this.writingOwners : undefined, counts: this.writingCounts, positioned: true })
    if (taken !== undefined) pieces.push({ data: toBuffer(taken, this.bytes?.encoding ?? encodingOf(stream)), owners, counts, positioned: true })
    let at = 0
    try {
      for (; at < pieces.length; at++) {
        const piece = pieces[at] as ExitPiece
        if (piece.positioned) position = writeAllSync(fd, piece.data, position)
        else writeAllSync(fd, piece.data)
      }
    } catch (err) {
      // A pipe that stopped taking lines (see writeAllSync): the lines of this sink's whose newline
      // did not go out, in that piece and those after it, are lost, and counted in `dropped` (an
      // 'exit' listener of the app's may read it). No warning: the process has no later tick.
      for (let i = at; i < pieces.length; i++) {
        const { data, owners: its, counts: theirs } = pieces[i] as ExitPiece
        if (its === undefined || theirs === undefined) continue
        const from = i === at && err instanceof PartlyWritten ? err.written : 0
        this.countLastDropped(its, theirs, newlinesIn(data, from))
      }
      throw err
    }
  }

  /** Counts, as dropped, the last `lines` lines of `owners` (`counts` lines each, or of one owner). */
  private countLastDropped (owners: Owner | Owner[], counts: number | number[], lines: number): void {
    if (!Array.isArray(owners)) { owners.dropped += Math.min(lines, counts as number); return }
    for (let i = owners.length - 1; i >= 0 && lines > 0; i--) {
      const n = Math.min(lines, (counts as number[])[i] as number)
      ;(owners[i] as Owner).dropped += n
      lines -= n
    }
  }

  /**
   * For a batched sink, everything held: the encoded bytes as one chunk, or else the lines as a
   * list, written one by one, as morgan writes them (a stream in the process may take each
   * chunk as one record: a Writable sending each to a log service). With `whole` (for a write
   * through the file descriptor at exit), the lines joined, unless the stream now decodes text as
   * base64 or hex, which decodes joined lines differently. The sink holds nothing afterwards. A
   * buffer taken here is reused only if it is set as `writing` and its write completes.
   */
  private takeBatch (whole = false): unknown {
    const queue = this.takeQueue()
    if (this.bytes !== undefined) return this.bytes.take()
    if (queue.length <= 1) return queue[0]
    return whole && !perLineEncoding(encodingOf(this.stream)) ? queue.join('') : queue
  }

  /**
   * Hands a batch to the stream: as text to a replaced write() (see WRITABLE_WRITE), and one
   * line per write when it is a list (see takeBatch); `done` is given to the last write, or
   * called once a replaced write() returns.
   */
  private send (data: unknown, done?: (err?: unknown) => void, owners?: Owner | Owner[], counts?: number | number[]): unknown {
    const stream = this.stream as Writable
    let last = data
    this.sent = 0
    if (Array.isArray(data)) {
      const track = Array.isArray(owners) && Array.isArray(counts) && !hasOwnWrite(stream)
      for (let i = 0; i < data.length - 1; i++) {
        const chunk = data[i] as string
        if (!track) { stream.write(chunk); this.sent = i + 1; continue }
        // (a write that throws is counted by the caller: see countUnsent)
        this.writeTracked(chunk, { owners: (owners as Owner[])[i] as Owner, counts: (counts as number[])[i] as number })
        this.sent = i + 1
      }
      last = data[data.length - 1]
    }
    if (hasOwnWrite(stream)) {
      // a replaced write() has written the batch once the call returns (see write)
      const result = stream.write(this.asText(last))
      done?.()
      return result
    }
    return done === undefined ? stream.write(last as string) : stream.write(last as string, done)
  }

  /** Counts as dropped the lines of a batch that send() did not hand over (its write threw). */
  private countUnsent (owners: Owner | Owner[], counts: number | number[]): void {
    if (!Array.isArray(owners) || this.sent === 0) { this.countDropped(owners, counts); return }
    this.countDropped(owners.slice(this.sent), (counts as number[]).slice(this.sent))
  }

  /** A write of send()'s or writeHeld's called back: its lines are counted if it failed. */
  private settleHeld (held: HeldWrite, chunk: unknown, err: unknown, callback?: unknown): void {
    // counted already, if the stream closed first (see `closed`)
    if (!this.heldWrites.delete(held)) return
    const failure = this.failureOf(err, chunk, callback)
    if (failure === undefined) return
    this.countDropped(held.owners, held.counts)
    this.fail(failure)
  }

  /** The queued lines (none for a sink that encodes them); the sink's count of them restarts. */
  private takeQueue (): unknown[] {
    const queue = this.queue
    this.queue = []
    this.owners = []
    this.counts = []
    this.queuedBytes = 0
    return queue
  }

  /**
   * Writes the queued lines of a sink that writes them one by one: a line whose write() throws is
   * counted as dropped, and the lines after it are still written.
   */
  private writeEach (): void {
    const owners = this.owners
    const counts = this.counts
    const queue = this.takeQueue()
    for (let i = 0; i < queue.length; i++) {
      try {
        this.stream.write(queue[i] as string)
      } catch (err) {
        this.countDropped(owners[i] as Owner, counts[i] as number)
        this.report(err)
      }
    }
  }

  /**
   * Hands everything held to the stream at once, ahead of its end(): lines of responses already
   * answered would otherwise wait for the next batch, or for a 'drain' that an ending stream
   * never emits, and meet an ended stream. The stream buffers what it cannot write yet, as it
   * did every line morgan gave it.
   */
  writeHeld (): void {
    if (this.waiting) {
      this.waiting = false
      const events = this.stream as { removeListener?: (event: string, listener: () => void) => unknown }
      if (typeof events.removeListener === 'function') events.removeListener('drain', this.onDrain)
    }
    // the stream ends before it caught up: no later call may report them
    this.reportDropped()
    if (this.dead || this.owners.length === 0) return
    const owners = this.owners
    const counts = this.counts
    shared.holding.delete(this)
    if (!this.batched) {
      this.writeEach()
      return
    }
    // The buffer is not reused. A failed write's lines are counted here, as a batch's are.
    const data = this.takeBatch()
    if (data === undefined) return
    const held = lastWriteOf(data, owners, counts)
    this.heldWrites.add(held)
    try {
      const calledBack = (err?: unknown): void => { this.settleHeld(held, Array.isArray(data) ? data[data.length - 1] : data, err, calledBack) }
      held.callback = calledBack
      this.send(data, calledBack, owners, counts)
    } catch (err) {
      // counted here, not again once the stream has closed (see `closedLong`)
      this.heldWrites.delete(held)
      this.countUnsent(owners, counts)
      this.report(err)
    }
  }

  /**
   * The next write of a file, socket or the standard output, in the main thread: in this turn's
   * setImmediate, or, when the previous write started less than BATCH_INTERVAL ms ago, at that
   * mark. Under load this makes a write every BATCH_INTERVAL ms holding every line since; each
   * write to a file costs about 18 us of CPU (stream machinery, thread pool, write(2)), several
   * times the cost of formatting a line. A stream in the process (a PassThrough a test reads, a
   * Writable of the app's own) has no such cost to spread: it gets each line at once, as from
   * morgan, also while a write is in progress as long as its buffer has room (see takesMore), and
   * otherwise the lines that come meanwhile once that write completes, each in a write of its own,
   * so a test finds the line of a request as soon as the request is answered, also when a test
   * injector's promise, resolved as the response finishes, tells it so.
   */
  private schedule (): void {
    if (this.scheduled) return
    this.scheduled = true
    const wait = this.lastWrite + BATCH_INTERVAL - monotonicMs()
    if (wait <= 0) scheduleImmediate(flushSoon, this)
    else scheduleTimeout(flushSoon, Math.min(wait, BATCH_INTERVAL), this)
  }

  /** Writes `data`, the lines of `owners` (`counts` lines each, or `counts` lines of one owner). */
  private write (data: unknown, owners: Owner | Owner[], counts: number | number[]): void {
    const stream = this.stream as LogStream & EventSource
    if (stream.destroyed === true || (stream as { writableEnded?: unknown }).writableEnded === true) {
      // Writing to a destroyed stream fails without an 'error' event and never drains; one that
      // was ended (and maybe destroyed since, once finished) fails with an error of its own.
      this.writing = undefined
      this.countDropped(owners, counts)
      this.fail(new Error((stream as { writableEnded?: unknown }).writableEnded === true ? 'the stream was ended' : 'the stream was destroyed'))
      return
    }
    let ok: unknown
    let completed = false
    try {
      if (!this.batched) {
        ok = stream.write(data as string)
      } else if (!hasOwnWrite(stream)) {
        this.inFlight = true
        this.lastWrite = monotonicMs()
        const last = lastWriteOf(data, owners, counts)
        this.writingOwners = last.owners
        this.writingCounts = last.counts
        ok = this.send(data, this.onWritten, owners, counts)
      } else {
        // write() is replaced (see WRITABLE_WRITE): the batch goes as text, and is written once
        // the call returns.
        this.lastWrite = monotonicMs()
        ok = this.send(data)
        completed = true
      }
    } catch (err) {
      // A `write` that throws loses these lines only; the stream may accept the next ones.
      this.inFlight = false
      this.writing = undefined
      this.writingOwners = this.writingCounts = undefined
      this.countUnsent(owners, counts)
      this.reportThrown(err)
      return
    }
    // A 'drain' follows a false only from node's own write(): another writer (a replaced write(),
    // an object passing on another stream's answer) may never emit one, and is written to as
    // morgan writes, whatever it answers. A batch waits for its own write's callback instead:
    // node's stream calls it once everything written before it, and the batch, is written, while
    // a 'drain' waits for the stream to be empty, which another writer on it (morgan, the app's
    // own writes) may never let happen. One batch at a time in the stream bounds what it holds.
    if (ok === false && this.canWait && !this.dead && !this.batched && !hasOwnWrite(stream)) {
      this.waiting = true
      ;(stream as Required<Pick<EventSource, 'once'>>).once('drain', this.onDrain)
    }
    if (completed) this.written(undefined)
  }

  /** A batch as text, for a stream whose write() is replaced (see WRITABLE_WRITE). */
  private asText (data: unknown): string {
    return typeof data === 'string' ? data : (data as Buffer).toString(this.bytes?.encoding ?? 'utf8')
  }

  private written (err: unknown): void {
    this.inFlight = false
    const data = this.writing
    const owners = this.writingOwners
    const counts = this.writingCounts
    this.writing = undefined
    this.writingOwners = this.writingCounts = undefined
    err = this.failureOf(err, data, this.onWritten)
    if (data !== undefined && (err === undefined || err === null)) this.bytes?.release(data)
    if (err !== undefined && err !== null) {
      // the lines of the batch that failed are lost too
      if (owners !== undefined && counts !== undefined) this.countDropped(owners, counts)
      this.fail(err)
      return
    }
    if (!this.waiting) this.caughtUp()
  }

  private drained (): void {
    this.waiting = false
    if (!this.inFlight) this.caughtUp()
  }

  /** The stream accepts writes again: report what was dropped meanwhile, send what waits. */
  private caughtUp (): void {
    this.reportDropped()
    if (this.owners.length === 0) { this.release(); return }
    if (this.bytes !== undefined) this.schedule()
    else this.flush()
  }

  /** The app destroys the stream, without an error, now: see `overtaken`. */
  destroyedByTheApp (): void {
    this.bufferedAtDestroy = new Set((bufferedWrites(this.stream) ?? []).flatMap((entry) => [entry.chunk, entry.callback]))
  }

  /** `err` is node's report of a write that the app's own destroy() overtook. */
  private overtaken (err: unknown): boolean {
    return this.bufferedAtDestroy !== undefined && typeof err === 'object' && err !== null &&
      (err as { code?: unknown }).code === 'ERR_STREAM_DESTROYED'
  }

  /**
   * What the callback of the write of `chunk` reports, as a failure of the stream (undefined:
   * none). A file stream's destroy() waits for the write in progress, which then reaches the file
   * and calls back ERR_STREAM_DESTROYED all the same: only a chunk the stream still held when
   * the app destroyed it was lost, told by the chunk, or, for a line written as text (which the
   * stream keeps as a Buffer of its own), by the write's callback. Other streams say nothing more
   * of what they did.
   */
  private failureOf (err: unknown, chunk: unknown, callback?: unknown): unknown {
    if (err === undefined || err === null || !this.overtaken(err)) return err ?? undefined
    const ours = typeof chunk === 'object' && chunk !== null ? chunk : callback
    if (this.stream instanceof WriteStream && ours !== undefined && this.bufferedAtDestroy?.has(ours) === false) return undefined
    return new Error('the stream was destroyed before it had written the lines')
  }

  /**
   * The stream closed (not a 'close' emitted by hand on a node stream that still works). One
   * waited on for 'drain' would never drain. One destroyed takes nothing more: the lines waiting
   * for a write of it still pending, and those that come later, meet a destroyed stream in
   * write(), counted and reported once. A write still pending may yet call back (a stream whose
   * own write goes on after its destroy()), or never (a Transform destroyed while it held one
   * for its reader): see `closedLong`.
   */
  private closed (): void {
    const destroyed = (this.stream as { destroyed?: unknown }).destroyed
    if (destroyed === false) return
    if (this.waiting) {
      this.fail(new Error('the stream closed before draining'))
      return
    }
    if (destroyed !== true) return
    this.lostBuffered(true)
    // (a test's fake timers, with node's own out of reach, would run the grace at once)
    if ((this.inFlight || this.heldWrites.size > 0) && nodeTimersAtHand()) scheduleTimeout(settleClosed, CLOSE_GRACE, this, false)
    if (this.inFlight) {
      this.inFlight = false
      if (this.owners.length > 0) this.flush()
      else this.release()
    }
  }

  /**
   * The stream is destroyed: node never writes what it still buffers, and calls those writes back
   * (with ERR_STREAM_DESTROYED) only once the write in progress completes, which it never does in
   * a Duplex whose reader has stalled, say. Their lines are counted now, rather than a second
   * after the stream's 'close' (see closedLong), which a stream made with `emitClose: false` never
   * emits, and which the process may not wait for (an app may exit right after its destroy());
   * `report`: reported as the stream's failure, when no 'error' of its own does.
   */
  lostBuffered (report: boolean): void {
    if (this.dropBuffered() && report) this.fail(new Error('the stream was destroyed before it had written the lines'))
  }

  /** Counts the lines of the writes the stream still buffers (see lostBuffered); whether any. */
  private dropBuffered (): boolean {
    if (this.heldWrites.size === 0 && this.writingOwners === undefined) return false
    let processing: unknown
    try {
      processing = (this.stream as { _writableState?: { bufferProcessing?: unknown } })._writableState?.bufferProcessing
    } catch {
      // a stream of the app's that cannot show its state: its writes are settled by their callbacks
      return false
    }
    // While node hands its buffer over (to the stream's _writev(), or one by one to its _write(),
    // which may destroy the stream from there), the chunks still listed are being written, or are
    // called back at once, the stream destroyed: none is left behind.
    if (processing === true) return false
    const buffer = bufferedWrites(this.stream)
    if (buffer === undefined || buffer.length === 0) return false
    const callbacks = new Set(buffer.map((entry) => entry.callback))
    let lost = false
    for (const held of this.heldWrites) {
      if (held.callback === undefined || !callbacks.has(held.callback)) continue
      // (its callback, if it ever comes, finds it settled: see settleHeld)
      this.heldWrites.delete(held)
      this.countDropped(held.owners, held.counts)
      lost = true
    }
    if (this.writingOwners !== undefined && this.writingCounts !== undefined && callbacks.has(this.onWritten)) {
      this.countDropped(this.writingOwners, this.writingCounts)
      this.writingOwners = this.writingCounts = undefined
      lost = true
    }
    return lost
  }

  /** The writes the stream has still not called back CLOSE_GRACE ms after it closed are lost. */
  closedLong (): void {
    let lost = false
    if (this.writingOwners !== undefined && this.writingCounts !== undefined) {
      this.countDropped(this.writingOwners, this.writingCounts)
      this.writingOwners = this.writingCounts = undefined
      lost = true
    }
    for (const held of this.heldWrites) {
      this.countDropped(held.owners, held.counts)
      lost = true
    }
    this.heldWrites.clear()
    if (lost) this.fail(new Error('the stream closed without completing a write'))
  }

  /** Reports the lines dropped for maxPending since the last report, if any. */
  private reportDropped (): void {
    if (this.unreported === 0) return
    const n = this.unreported
    this.unreported = 0
    warn(`${n} log line${n === 1 ? ' was' : 's were'} dropped while the stream was not keeping up (more than maxPending bytes waiting)`, 'FOYER_LOG_LINES_DROPPED')
  }

  private countDropped (owners: Owner | Owner[], counts: number | number[]): void {
    if (!Array.isArray(owners)) { owners.dropped += counts as number; return }
    for (let i = 0; i < owners.length; i++) (owners[i] as Owner).dropped += (counts as number[])[i] as number
  }

  private dropQueued (): void {
    this.countDropped(this.owners, this.counts)
    this.bytes?.clear()
    this.takeQueue()
    shared.holding.delete(this)
  }

  private fail (err: unknown): void {
    if (this.dead) return
    this.dead = true
    this.waiting = false
    this.dropQueued()
    this.report(err)
  }

  private report (err: unknown): void {
    if (this.failureReported) return
    this.failureReported = true
    warn(`the log stream failed (${reasonOf(err)}); lines that cannot be written to it are dropped and counted in the middleware's \`dropped\``, 'FOYER_LOG_STREAM_ERROR')
  }

  /** Reports, once, an error the sink goes on after; a failure later is still reported (see `report`). */
  private reportHiccup (message: string): void {
    if (this.hiccupReported || this.failureReported) return
    this.hiccupReported = true
    warn(message, 'FOYER_LOG_STREAM_ERROR')
  }
}

// A stream's end() first takes the lines still owed to it: those of responses their connection
// has taken whole but whose 'finish', where the line is made, has not come yet (the app may end
// the stream in the callback of res.end(), which from Node.js 24 runs before 'finish'), those the
// legacy `buffer` option holds, and those the sink holds (up to BATCH_INTERVAL ms of them, or
// lines waiting for a 'drain' that an ending stream never emits). Without this they would reach
// an ended stream, where morgan, which writes each line at once, had already written them: a
// server that ends its log stream once it has closed (`server.close(() => stream.end())`) would
// lose its last lines. So does destroy() called without an error (an app that closes a socket to
// its log collector at shutdown): what the stream can write before it is destroyed (a socket
// whose peer keeps up takes it at once) gets out, as morgan's lines had. end() and destroy() are
// replaced on the stream object itself, once, by shared functions; close() of a file stream
// calls end() too. The standard output and error are no exception: an app may end them before
// it exits.
const PREVIOUS_STREAM_END = Symbol.for('foyer.logger.streamEnd')
const PREVIOUS_STREAM_DESTROY = Symbol.for('foyer.logger.streamDestroy')

type End = (this: Writable, ...args: unknown[]) => unknown

interface Ending {
  end?: unknown
  destroy?: unknown
  [PREVIOUS_STREAM_END]?: End
  [PREVIOUS_STREAM_DESTROY]?: End
}

/** Hands the lines still owed to `stream` to it now (see above). */
function writeOwedLines (stream: object): void {
  const sink = sinkOf(stream)
  if (sink === undefined) return
  makeOwedLines()
  // (told by shape: a buffer made by another copy of this module holds the same shared sink)
  for (const item of shared.holding) {
    if (item.feeds?.(sink) === true) item.flush?.()
  }
  sink.writeHeld()
}

function endAfterHeldLines (this: Writable & Ending, ...args: unknown[]): unknown {
  // Ended or destroyed already, it takes nothing more: the lines are counted as any later line.
  if (!this.writableEnded && !this.destroyed) writeOwedLines(this)
  return (this[PREVIOUS_STREAM_END] as End).apply(this, args)
}

interface BufferedWrite {
  chunk?: unknown
  callback?: unknown
}

/**
 * The writes node still buffers for `stream` (its `writableBuffer`), or undefined when it shows
 * none: a stream of the app's whose buffer cannot be read has its writes settled by their
 * callbacks. The entry node is handing to _write() meanwhile is listed as null: left out.
 */
function bufferedWrites (stream: unknown): BufferedWrite[] | undefined {
  let buffer: unknown
  try {
    buffer = (stream as { writableBuffer?: unknown }).writableBuffer
  } catch {
    return undefined
  }
  if (!Array.isArray(buffer)) return undefined
  return (buffer as Array<BufferedWrite | null | undefined>).filter((entry): entry is BufferedWrite => entry !== null && entry !== undefined)
}

function destroyAfterHeldLines (this: Writable & Ending, ...args: unknown[]): unknown {
  // Destroyed for an error (node destroys a stream that fails): a failure. Once ended, nothing
  // more can be written to it, but what it still writes is overtaken all the same.
  const byTheApp = (args[0] === undefined || args[0] === null) && !this.destroyed
  if (byTheApp) {
    if (!this.writableEnded) writeOwedLines(this)
    sinkOf(this)?.destroyedByTheApp()
  }
  const result = (this[PREVIOUS_STREAM_DESTROY] as End).apply(this, args)
  // (for an error, the stream's 'error' reports it, and what it cut short)
  if (byTheApp && this.destroyed) sinkOf(this)?.lostBuffered(true)
  return result
}

function holdLinesAtEnd (stream: LogStream): void {
  const ending = stream as LogStream & Ending
  // A writer that is not a stream (a frozen `{ write, end }`, say) has no end() to wait for.
  if (!(stream instanceof Writable) || !Object.isExtensible(stream)) return
  if (typeof ending.end === 'function' && ending[PREVIOUS_STREAM_END] === undefined) {
    ending[PREVIOUS_STREAM_END] = ending.end as End
    ending.end = endAfterHeldLines
  }
  if (typeof ending.destroy === 'function' && ending[PREVIOUS_STREAM_DESTROY] === undefined) {
    ending[PREVIOUS_STREAM_DESTROY] = ending.destroy as End
    ending.destroy = destroyAfterHeldLines
  }
}

// A stream's sink is kept on the stream itself (under a Symbol.for key, not enumerable), so every
// copy of this module finds it: copies installed side by side, and copies loaded in realms of
// their own, as Jest loads one for each test file while process.stdout stays the same stream.
// A sink for each copy would add its listeners to the stream once more for each, and keep each
// copy alive through them. Only a stream that takes no new property has its sink in the table.
const SINK = Symbol.for('foyer.logger.sink')

function sinkOf (stream: object): Sink | undefined {
  return (stream as { [SINK]?: Sink })[SINK] ?? shared.sinks.get(stream)
}

/** The one sink of `stream`, created on first use. */
export function sinkFor (stream: LogStream): Sink {
  let sink = sinkOf(stream)
  if (sink === undefined) {
    sink = new Sink(stream)
    if (Object.isExtensible(stream)) Object.defineProperty(stream, SINK, { value: sink, configurable: true })
    else shared.sinks.set(stream, sink)
  }
  return sink
}

function flushInterval (buffer: IntervalBuffer): void {
  buffer.flush()
}

/**
 * morgan's deprecated `buffer` option: lines are collected for `interval` milliseconds, then
 * handed to the sink as one chunk. As morgan's, the timer keeps the process alive until it has
 * written them, so a stream that completes its writes later gets them too; on process.exit() the
 * exit hook writes what is left.
 */
export class IntervalBuffer implements Output, Flushable {
  private lines: unknown[] = []
  private timer: NodeJS.Timeout | undefined
  private readonly sink: Sink
  private readonly interval: number
  private owner: Owner | undefined

  constructor (sink: Sink, interval: number) {
    this.sink = sink
    this.interval = interval
  }

  push (line: unknown, owner: Owner, endLine = false): void {
    this.owner = owner
    this.lines.push(endLine ? asText(line) + '\n' : line)
    if (this.timer === undefined) {
      this.timer = setTimeout(flushInterval, this.interval, this)
      hold(this)
    }
  }

  flush (): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    shared.holding.delete(this)
    if (this.lines.length === 0 || this.owner === undefined) return
    const chunk = this.lines.join('')
    const count = this.lines.length
    this.lines = []
    this.sink.push(chunk, this.owner, false, count)
  }

  flushSync (): void {
    this.flush()
    this.sink.flushSync()
  }

  /** Whether this buffer's lines go to `sink`. */
  feeds (sink: object): boolean {
    return this.sink === sink
  }
}
