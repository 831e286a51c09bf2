// Helpers for the logger tests: a Writable that collects lines, morgan for side-by-side
// comparison, a server that runs several loggers (foyer's and morgan's) on every request, and
// a way to watch process warnings.
import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http'
import { Writable } from 'node:stream'
import { logger } from '../../src/index.js'
import { chain, startServer } from './server.js'
import type { Handler, Middleware, TestServer } from './server.js'

/** A byte stream that keeps every chunk it receives and the lines they hold. */
export class LineCollector extends Writable {
  text = ''
  readonly chunks: string[] = []

  override _write (chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = chunk.toString('utf8')
    this.chunks.push(text)
    this.text += text
    done()
  }

  /** The complete lines so far, without their newlines. */
  get lines (): string[] {
    const complete = this.text.slice(0, this.text.lastIndexOf('\n') + 1)
    return complete === '' ? [] : complete.slice(0, -1).split('\n')
  }

  /** Resolves with the lines once there are at least `count` of them. */
  async waitForLines (count: number, ms = 3000): Promise<string[]> {
    await waitFor(() => this.lines.length >= count, ms)
    return this.lines
  }
}

/** A plain `{ write }` destination, as people write for winston: one call per line. */
export function callRecorder (): { write: (line: string) => void, calls: string[] } {
  const calls: string[] = []
  return { write: (line: string) => { calls.push(line) }, calls }
}

// node's own timers, taken before a test replaces the global ones with fakes.
const nodesSetTimeout = globalThis.setTimeout
const nodesDateNow = Date.now

/** Waits `ms` on node's own timers, whatever fakes a test installed. */
export async function sleep (ms: number): Promise<void> {
  await new Promise((resolve) => nodesSetTimeout(resolve, ms))
}

/** Polls `check` until it holds, on node's own timers, whatever fakes a test installed; fails after `ms`. */
export async function waitFor (check: () => boolean, ms = 3000): Promise<void> {
  const started = nodesDateNow()
  while (!check()) {
    if (nodesDateNow() - started > ms) throw new Error(`condition not met within ${ms} ms`)
    await new Promise((resolve) => nodesSetTimeout(resolve, 5))
  }
}

/** Lets a turn of the event loop or two pass, so lines due now have been written. */
export async function settle (ms = 30): Promise<void> {
  await sleep(ms)
}

interface MorganModule {
  (format: unknown, options?: unknown): Middleware
  token: (name: string, fn: (...args: never[]) => unknown) => MorganModule
  format: (name: string, fmt: unknown) => MorganModule
  compile: (format: string) => (tokens: unknown, req: unknown, res: unknown) => unknown
}

// morgan has no type declarations installed; it is only the reference here.

export const morgan = require('morgan') as MorganModule

/**
 * A server whose requests pass through `middlewares` then `handler`. Any `ServerOptions` (for
 * example `insecureHTTPParser`, to let raw control characters reach the loggers) apply.
 */
export async function serve (middlewares: Middleware[], handler: Handler, options: ServerOptions = {}): Promise<TestServer> {
  return await startServer(chain(middlewares, handler), options)
}

/**
 * A handler answering `body` with `status` and the given headers. Like Express's res.send, it
 * sets Content-Length (`:res[content-length]` only sees headers set on the response), unless
 * the headers ask for chunked encoding or the status has no body.
 */
export function answer (status = 200, body = 'ok', headers: Record<string, string | number | string[]> = {}): Handler {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.statusCode = status
    const bodiless = status < 200 || status === 204 || status === 304
    if (!bodiless && headers['transfer-encoding'] === undefined) res.setHeader('content-length', Buffer.byteLength(body))
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
    res.end(bodiless ? undefined : body)
  }
}

/** Collects process warnings until `stop()`. */
export function watchWarnings (): { warnings: Error[], withCode: (code: string) => Error[], stop: () => void } {
  const warnings: Error[] = []
  const onWarning = (w: Error): void => { warnings.push(w) }
  process.on('warning', onWarning)
  return {
    warnings,
    /** The warnings so far with this `code`. */
    withCode: (code) => warnings.filter((w) => (w as { code?: string }).code === code),
    stop: () => { process.off('warning', onWarning) }
  }
}

/** Replaces what differs between two loggers of one request: dates and total times. */
export function maskClock (line: string): string {
  return line
    .replace(/\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000/g, '<clf>')
    .replace(/\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT/g, '<web>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g, '<iso>')
}

export interface SideBySide {
  /** foyer's line, without its newline. */
  ours: string
  /** morgan's line for the same request. */
  theirs: string
}

export interface CompareOptions {
  /** What answers the request (default: 200 `ok`). */
  handler?: Handler
  /** Middlewares before both loggers. */
  before?: Middleware[]
  serverOptions?: ServerOptions
  /** Options given to both loggers, besides the stream. */
  options?: Record<string, unknown>
  /** How many lines each logger writes for the request (default 1). */
  lines?: number
}

/**
 * Mounts morgan and foyer with the same format on one server, sends one request with `send`,
 * and returns both lines. Both loggers see the same request and response and share the
 * documented `_startAt` fields, so response times agree to the digit.
 */
export async function compareWithMorgan (format: unknown, send: (port: number) => Promise<unknown>, compare: CompareOptions = {}): Promise<SideBySide> {
  const result = await compareOnce(format, send, compare)
  // Each logger reads the clock when it writes, a few microseconds apart: once in a while a
  // second ends in between. Then the request is made again.
  if (result.ours !== result.theirs && maskClock(result.ours) === maskClock(result.theirs)) return await compareOnce(format, send, compare)
  return result
}

async function compareOnce (format: unknown, send: (port: number) => Promise<unknown>, compare: CompareOptions): Promise<SideBySide> {
  const collector = new LineCollector()
  const recorder = callRecorder()
  const ours = logger(format as string, { ...compare.options, stream: collector })
  const theirs = morgan(format, { ...compare.options, stream: recorder })
  const server = await serve([...(compare.before ?? []), theirs, ours as Middleware], compare.handler ?? answer(), compare.serverOptions)
  try {
    await send(server.port)
    const count = compare.lines ?? 1
    await waitFor(() => recorder.calls.length >= count)
    const lines = await collector.waitForLines(count)
    return { ours: lines.join('\n'), theirs: recorder.calls.join('').slice(0, -1) }
  } finally {
    await server.close()
  }
}
