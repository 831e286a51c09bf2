// Getting lines to the stream: batching, order, a bound on what waits for a slow stream, a
// failing stream that never takes the server down, and lines kept at exit.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, execFileSync, spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { close as fsClose, closeSync, constants, createWriteStream, mkdtempSync, open as fsOpen, openSync, readdirSync, readFileSync, readSync, rmSync, write as fsWrite, writeFile, writev as fsWritev, writeSync } from 'node:fs'
import type { WriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { IncomingMessage, ServerResponse } from 'node:http'
import { connect as http2Connect } from 'node:http2'
import { request as httpsRequest } from 'node:https'
import { createServer as createTcpServer, connect, Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { PassThrough, Writable } from 'node:stream'
import { promisify } from 'node:util'
import { Worker } from 'node:worker_threads'
import { logger } from '../../src/index.js'
import { PartlyWritten, writeAllSync } from '../../src/logger/sink.js'
import type { FormatFn } from '../../src/index.js'
import { answer, callRecorder, LineCollector, morgan, serve, settle, waitFor, watchWarnings } from '../helpers/logger-lines.js'
import { gc } from '../helpers/gc.js'
import { loadCopy } from '../helpers/realm.js'
import { request } from '../helpers/server.js'
import type { Handler, Middleware } from '../helpers/server.js'

/** A byte stream that holds every write until `release()`; it drains only then. */
class HeldStream extends Writable {
  readonly received: string[] = []
  private readonly held: Array<() => void> = []
  private open = false
  constructor (highWaterMark = 1024) { super({ highWaterMark }) }
  override _write (chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.received.push(chunk.toString())
    if (this.open) done()
    else this.held.push(() => { done() })
  }

  /** Completes the write held, and every later write at once. */
  release (): void {
    this.open = true
    for (const done of this.held.splice(0)) done()
  }

  /** Completes the write held, and waits for the writes of what waited for it. */
  async catchUp (): Promise<void> {
    this.release()
    await waitFor(() => this.received.length >= 2)
    await settle()
  }

  get bytes (): number {
    return this.received.reduce((n, c) => n + Buffer.byteLength(c), 0)
  }
}

/**
 * Every one of `total` lines is either delivered to `held` or counted in the logger's `dropped`,
 * and the count was reported once, when the stream drained.
 */
function assertDeliveredOrCounted (held: HeldStream, log: { dropped: number }, total: number, watch: ReturnType<typeof watchWarnings>): void {
  const delivered = held.received.join('').split('\n').length - 1
  assert.equal(delivered + log.dropped, total, 'every line is either delivered or counted')
  const reports = watch.withCode('FOYER_LOG_LINES_DROPPED')
  assert.equal(reports.length, 1)
  assert.match(reports[0]?.message ?? '', new RegExp(`^foyer/logger: ${log.dropped} log lines were dropped`))
}

/** Waits until the file at `path` holds `count` lines, and gives them without newlines. */
async function linesOfFile (path: string, count: number): Promise<string[]> {
  await waitFor(() => readFileSync(path, 'utf8').split('\n').length === count + 1, 5000)
  return readFileSync(path, 'utf8').slice(0, -1).split('\n')
}

/** Resolves when `stream` closes (once() would reject on an 'error' before it). */
async function closeOf (stream: Writable): Promise<void> {
  await new Promise<void>((resolve) => stream.on('close', () => { resolve() }))
}

function tempDir (): string {
  return mkdtempSync(join(tmpdir(), 'foyer-logger-'))
}

/**
 * Runs `check(port, path)` against a server whose logger writes `format` to a file stream of a
 * temporary file at `path`; closes and removes everything afterwards.
 */
async function withFileLogger (format: FormatFn, check: (port: number, path: string) => Promise<void>): Promise<void> {
  const dir = tempDir()
  const path = join(dir, 'access.log')
  const file = createWriteStream(path)
  await once(file, 'ready')
  const server = await serve([logger(format, { stream: file }) as Middleware], answer())
  try {
    await check(server.port, path)
  } finally {
    await server.close()
    file.end()
    rmSync(dir, { recursive: true, force: true })
  }
}

const run = promisify(execFile)

async function sendAll (port: number, paths: string[], headers: Record<string, string> = {}): Promise<void> {
  // a few at a time: concurrent enough to overlap, not enough to exhaust sockets
  for (let i = 0; i < paths.length; i += 10) {
    await Promise.all(paths.slice(i, i + 10).map(async (path) => {
      const reply = await request(port, { path, headers })
      assert.equal(reply.status, 200)
    }))
  }
}

describe('batching', () => {
  /** Loggers `a :url`, `b :url` and `c :url`, in that order, all writing to `stream`. */
  const threeLoggers = (stream: Writable): Middleware[] => ['a', 'b', 'c'].map((name) => logger(`${name} :url`, { stream }) as Middleware)

  it('joins the lines of one turn into one write for a file', async () => {
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const file = createWriteStream(path)
    await once(file, 'ready')
    const writes: string[] = []
    const write = file._write.bind(file)
    file._write = (chunk: Buffer, encoding: BufferEncoding, done: (err?: Error | null) => void) => {
      writes.push(chunk.toString())
      write(chunk, encoding, done)
    }
    const server = await serve(threeLoggers(file), answer())
    try {
      await request(server.port, { path: '/x' })
      await waitFor(() => writes.length > 0)
      await settle()
      assert.deepEqual(writes, ['a /x\nb /x\nc /x\n'])
    } finally {
      await server.close()
      file.end()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('writes each line to a stream in the process in a write of its own, as morgan does, also those that come while a write is in progress', async () => {
    // a Writable of the app's own may take each chunk as one record (one message to a log service)
    const chunks = async (make: (stream: Writable) => Middleware[]): Promise<string[]> => {
      const out = new LineCollector()
      const server = await serve(make(out), answer())
      try {
        await request(server.port, { path: '/x' })
        await out.waitForLines(3)
        await settle()
        return out.chunks
      } finally {
        await server.close()
      }
    }
    const theirs = await chunks((stream) => ['a', 'b', 'c'].map((name) => morgan(`${name} :url`, { stream })))
    assert.deepEqual(theirs, ['a /x\n', 'b /x\n', 'c /x\n'])
    assert.deepEqual(await chunks(threeLoggers), theirs)
  })

  it('gets the line to a stream in the process before a promise resolved as the response finishes goes on, as test injectors resolve theirs, as from morgan', async () => {
    const seen = async (make: (stream: Writable) => Middleware): Promise<string> => {
      const out = new LineCollector()
      const req = new IncomingMessage(new Socket())
      Object.assign(req, { method: 'GET', url: '/injected', headers: {} })
      const res = new ServerResponse(req)
      res.assignSocket(new Writable({ write (_chunk, _encoding, done) { done() } }) as unknown as Socket)
      const answered = new Promise<void>((resolve) => res.on('finish', () => { resolve() }))
      make(out)(req, res, () => { res.end('ok') })
      await answered
      return out.text
    }
    assert.equal(await seen((stream) => morgan(':url', { stream })), '/injected\n')
    assert.equal(await seen((stream) => logger(':url', { stream }) as Middleware), '/injected\n')
  })

  it('hands a line to a stream in the process at once while a write is in progress, when its buffer has room, so output the app writes after the line comes after it, as with morgan', async () => {
    // The app writes a record of its own to the log stream as each response finishes, after the
    // logger's line; the stream's first write completes when the test says.
    const order = async (make: (stream: Writable) => Middleware): Promise<string[]> => {
      const held = new HeldStream()
      const record: Handler = (req, res) => {
        res.on('finish', () => { held.write(`app ${req.url ?? ''}\n`) })
        answer()(req, res)
      }
      const server = await serve([make(held)], record)
      try {
        for (const path of ['/1', '/2', '/3']) await request(server.port, { path })
        await waitFor(() => held.received.length === 1)
        held.release()
        await waitFor(() => held.received.length === 6)
        await settle()
        return held.received
      } finally {
        held.release()
        await server.close()
      }
    }
    const theirs = await order((stream) => morgan(':url', { stream }))
    assert.deepEqual(theirs, ['/1\n', 'app /1\n', '/2\n', 'app /2\n', '/3\n', 'app /3\n'])
    assert.deepEqual(await order((stream) => logger(':url', { stream }) as Middleware), theirs)
  })

  it('hands a line to a stream in the process at once while a write is in progress, once its buffer is under its highWaterMark again, before it has drained, as with morgan', async () => {
    /** Holds every write until the test completes them, one by one or all. */
    class Stepped extends Writable {
      readonly received: string[] = []
      private readonly held: Array<() => void> = []
      private open = false
      override _write (chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
        this.received.push(chunk.toString())
        if (this.open) done()
        else this.held.push(() => { done() })
      }

      step (): void { this.held.shift()?.() }
      release (): void {
        this.open = true
        for (const done of this.held.splice(0)) done()
      }
    }
    const order = async (make: (stream: Writable) => Middleware): Promise<string[]> => {
      const out = new Stepped({ highWaterMark: 100 })
      const record: Handler = (req, res) => {
        res.on('finish', () => { out.write(`F${req.url ?? ''}\n`) })
        answer()(req, res)
      }
      const server = await serve([make(out)], record)
      try {
        // a record of the app's fills the buffer: the stream asks for a 'drain', which comes only
        // once it is empty
        assert.equal(out.write(`${'B'.repeat(150)}\n`), false)
        await request(server.port, { path: '/1' })
        // the record is written: the line of /1 is being written, the buffer far under its mark
        out.step()
        await settle()
        assert.ok(out.writableNeedDrain && out.writableLength < 100)
        await request(server.port, { path: '/2' })
        out.release()
        await waitFor(() => out.received.length === 5)
        await settle()
        return out.received.slice(1)
      } finally {
        out.release()
        await server.close()
      }
    }
    const theirs = await order((stream) => morgan(':url', { stream }))
    assert.deepEqual(theirs, ['/1\n', 'F/1\n', '/2\n', 'F/2\n'])
    assert.deepEqual(await order((stream) => logger(':url', { stream }) as Middleware), theirs)
  })

  it('sends the lines that arrive while a write is in progress, to a stream whose buffer is full, once it completes, in order, each in a write of its own', async () => {
    // (a highWaterMark of one byte: the first line fills the stream's buffer)
    const held = new HeldStream(1)
    const server = await serve([logger(':url', { stream: held }) as Middleware], answer())
    try {
      await request(server.port, { path: '/first' })
      await waitFor(() => held.received.length === 1)
      for (const path of ['/2', '/3', '/4', '/5']) await request(server.port, { path })
      await settle(30)
      assert.deepEqual(held.received, ['/first\n'], 'nothing more while the first write is in progress')
      held.release()
      await waitFor(() => held.received.length === 5)
      await settle()
      assert.deepEqual(held.received, ['/first\n', '/2\n', '/3\n', '/4\n', '/5\n'])
    } finally {
      held.release()
      await server.close()
    }
  })

  it('writes its lines while the app\'s tests run on fake timers, as morgan does', async (t) => {
    const out = new LineCollector()
    const server = await serve([logger(':url', { stream: out }) as Middleware], answer())
    // The fake clock never moves in this test: the lines can only come on node's own timers.
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'setInterval', 'Date'] })
    try {
      for (const path of ['/1', '/2', '/3']) await request(server.port, { path })
      await waitFor(() => out.lines.length === 3)
      assert.deepEqual(out.lines, ['/1', '/2', '/3'])
    } finally {
      t.mock.timers.reset()
      await server.close()
    }
  })

  it('writes its lines when the app\'s tests installed fake timers before loading it, and once they are put away, as morgan does', async () => {
    const counts = async (name: string): Promise<unknown> => {
      // (without its cache: tsx would schedule the cache's writes on the fake timers, which Node.js
      // 20.11's hand back without unref())
      const { stderr } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/fake-timers-at-load.ts'], { env: { ...process.env, LOGGER: name, TSX_DISABLE_CACHE: '1' } })
      return JSON.parse(stderr.slice(stderr.lastIndexOf('\n') + 1))
    }
    // the number of lines as each of the six answers came, and at the end
    const expected = { seen: [1, 2, 3, 4, 5, 6], lines: 6 }
    assert.deepEqual(await counts('morgan'), expected)
    assert.deepEqual(await counts('foyer'), expected)
  })

  it('gets the line of each request to a stream in the process by the time its answer arrives, as from morgan', async () => {
    const out = new LineCollector()
    const server = await serve([logger(':url', { stream: out }) as Middleware], answer())
    try {
      const seen: number[] = []
      for (let i = 0; i < 20; i++) {
        await request(server.port, { path: `/${i}` })
        seen.push(out.lines.length)
      }
      assert.deepEqual(seen, Array.from({ length: 20 }, (_, i) => i + 1))
    } finally {
      await server.close()
    }
  })

  it('writes one line per call, at once, to a plain object with a write method', async () => {
    const recorder = callRecorder()
    const out = logger(':url', { stream: recorder, immediate: true }) as Middleware
    const server = await serve([out, out], (req, res) => {
      // both lines are there before the handler runs
      answer(200, String(recorder.calls.length))(req, res)
    })
    try {
      const reply = await request(server.port, { path: '/sync' })
      assert.equal(reply.body, '2')
      assert.deepEqual(recorder.calls, ['/sync\n', '/sync\n'])
    } finally {
      await server.close()
    }
  })

  it('in a worker thread, hands the lines of each turn to the standard output in that turn: a worker that is terminated has none left', async () => {
    // A worker's standard output passes its chunks to the main thread as messages: no system call
    // to spread over a batch. The fixture blocks its thread once its requests are answered, so
    // lines a batch still held would never come.
    // (tsx's hooks do not reach a worker on every Node.js version: the worker loads them itself)
    const fixture = resolve('test/logger/fixtures/worker-server.ts')
    const worker = new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(fixture)})`, { eval: true, stdout: true, workerData: { count: 20 } })
    let text = ''
    worker.stdout.on('data', (chunk: Buffer) => { text += chunk.toString() })
    try {
      await once(worker, 'message')
      await waitFor(() => text.split('\n').length > 20, 2000).catch(() => {})
      assert.equal(text, Array.from({ length: 20 }, (_, i) => `GET /r${i} 200\n`).join(''))
    } finally {
      await worker.terminate()
    }
  })

  it('in a worker thread, hands each line to a file stream or a socket at once, as morgan does: a worker that is terminated has none left', async () => {
    // A terminated worker runs no exit hook: lines a batch held for a later turn would be lost.
    const fixture = resolve('test/logger/fixtures/worker-server.ts')
    const expected = Array.from({ length: 20 }, (_, i) => `GET /r${i} 200\n`).join('')
    const dir = tempDir()
    let received = ''
    const collector = createTcpServer((connection) => { connection.on('data', (chunk: Buffer) => { received += chunk.toString() }) })
    collector.listen(0, '127.0.0.1')
    try {
      await once(collector, 'listening')
      const path = join(dir, 'access.log')
      const found: Record<string, string> = {}
      for (const dest of [{ file: path }, { port: (collector.address() as AddressInfo).port }]) {
        const closed = 'port' in dest ? once(collector, 'connection').then(async ([connection]) => { await once(connection as Socket, 'close') }) : undefined
        const worker = new Worker(`require('tsx/cjs/api').register(); require(${JSON.stringify(fixture)})`, { eval: true, workerData: { count: 20, ...dest } })
        try {
          await once(worker, 'message')
        } finally {
          await worker.terminate()
        }
        await closed
        found['port' in dest ? 'socket' : 'file'] = 'port' in dest ? received : readFileSync(path, 'utf8')
      }
      assert.deepEqual(found, { file: expected, socket: expected })
    } finally {
      collector.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('keeps lines whole when two files append to one path', async () => {
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const first = createWriteStream(path, { flags: 'a' })
    const second = createWriteStream(path, { flags: 'a' })
    const server = await serve([
      logger('one :url :req[x-pad]', { stream: first }) as Middleware,
      logger('two :url :req[x-pad]', { stream: second }) as Middleware
    ], answer())
    try {
      const paths = Array.from({ length: 200 }, (_, i) => `/${i}`)
      await sendAll(server.port, paths, { 'x-pad': 'p'.repeat(3000) })
      const lines = await linesOfFile(path, 400)
      assert.equal(lines.length, 400)
      for (const line of lines) assert.match(line, /^(one|two) \/\d+ p{3000}$/)
    } finally {
      await server.close()
      first.end()
      second.end()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('gets every line whole and once through a stream that rotates its file as it writes', async () => {
    const dir = tempDir()
    // a file a chunk, of whatever lines that chunk holds, as a rotating stream that starts a new
    // file by size or by time may
    let file = 0
    const rotating = new Writable({
      write (chunk: Buffer, _encoding, done) {
        writeFile(join(dir, `access.${String(++file).padStart(4, '0')}.log`), chunk, done)
      }
    })
    const server = await serve([logger(':url :req[x-pad]', { stream: rotating }) as Middleware], answer())
    try {
      const paths = Array.from({ length: 200 }, (_, i) => `/${i}`)
      await sendAll(server.port, paths, { 'x-pad': 'p'.repeat(1000) })
      await waitFor(() => file > 0 && rotating.writableLength === 0)
      await settle(50)
      const files = readdirSync(dir).sort()
      assert.ok(files.length > 1, `written in ${files.length} file(s)`)
      const text = files.map((name) => readFileSync(join(dir, name), 'utf8')).join('')
      for (const name of files) assert.match(readFileSync(join(dir, name), 'utf8'), /^(\/\d+ p{1000}\n)+$/, `${name} holds whole lines`)
      const logged = text.split('\n').slice(0, -1).map((line) => line.split(' ')[0])
      assert.deepEqual([...logged].sort(), [...paths].sort(), 'each line once')
    } finally {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('copies of the module', () => {
  it('share one sink per stream, in realms of their own too (Jest loads a copy for each test file): one listener on the stream, and every line', async () => {
    const out = new LineCollector()
    const copies = [loadCopy('src/index.ts'), loadCopy('src/index.ts')]
    const loggers = copies.map((copy, i) => (copy.logger as typeof logger)(`${i} :url`, { stream: out }) as Middleware)
    assert.equal(out.listenerCount('error'), 1)
    assert.equal(out.listenerCount('close'), 1)
    const server = await serve(loggers, answer())
    try {
      await request(server.port, { path: '/x' })
      // (each copy waits for the response on its own, so their lines may come in either order)
      assert.deepEqual((await out.waitForLines(2)).sort(), ['0 /x', '1 /x'])
    } finally {
      await server.close()
    }
  })

  it('give the tokens of the first copy what a logger of a later copy saw of the response: headers given to writeHead and the bytes sent', async () => {
    const out = new LineCollector()
    const later = loadCopy('src/index.ts', false)
    const log = (later.logger as typeof logger)(':status :res[content-length] :res-bytes', { stream: out }) as Middleware
    const server = await serve([log], (_req, res) => { res.writeHead(200, { 'Content-Length': 5 }); res.end('hello') })
    try {
      await request(server.port)
      assert.deepEqual(await out.waitForLines(1), ['200 5 5'])
    } finally {
      await server.close()
    }
  })

  it('lets go of a copy the app has unloaded (a hot reload) once it logged a response, keeping nothing of it for the exit', async () => {
    // what the exit hook keeps to run at exit, in the table every copy shares
    const exitWork = (globalThis as unknown as Record<symbol, { lineMakers?: unknown[] } | undefined>)[Symbol.for('foyer.logger.sinks')]
    const liveExitWork = (): number => (exitWork?.lineMakers ?? []).filter((held) => (typeof held === 'function' ? held : (held as WeakRef<object>).deref()) !== undefined).length
    // copies loaded by earlier tests, unloaded, may not have been collected yet
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      gc()
    }
    const before = liveExitWork()
    const load = async (): Promise<object> => {
      const copy = loadCopy('src/index.ts', false)
      const out = new LineCollector()
      const server = await serve([(copy.logger as typeof logger)(':url', { stream: out }) as Middleware], answer())
      try {
        await request(server.port, { path: '/reloaded' })
        await out.waitForLines(1)
      } finally {
        await server.close()
      }
      return copy
    }
    let loaded: object | undefined = await load()
    assert.equal(liveExitWork(), before + 1, 'the copy has exit work while it is loaded')
    // unloaded: nothing but this weak reference holds it any more
    const copy = new WeakRef(loaded)
    loaded = undefined
    // (the copy's batch window holds it for up to 10 ms once the last response is done)
    for (let i = 0; i < 40 && (copy.deref() !== undefined || liveExitWork() > before); i++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      gc()
    }
    assert.equal(copy.deref(), undefined)
    assert.equal(liveExitWork(), before)
  })
})

// File streams and sockets get lines encoded into a reused buffer as they arrive.
describe('streams that take bytes', () => {
  it('get every line intact and in order, whatever its length and characters, across many writes', async () => {
    // lengths from 0 to ~12,000 characters of one-, two-, three- and four-byte UTF-8, so lines
    // straddle the end of the buffer in every way
    const lineFor = (n: number): string => `${n} ` + 'aé€😀'.repeat((n * 397) % 3000)
    const total = 600
    await withFileLogger((_tokens, req) => lineFor(Number(req.url?.slice(1))), async (port, path) => {
      await sendAll(port, Array.from({ length: total }, (_, i) => `/${i}`))
      const lines = await linesOfFile(path, total)
      const byNumber = lines.map((line) => Number(line.slice(0, line.indexOf(' ')))).sort((a, b) => a - b)
      assert.deepEqual(byNumber, Array.from({ length: total }, (_, i) => i))
      for (const line of lines) assert.equal(line, lineFor(Number(line.slice(0, line.indexOf(' ')))))
    })
  })

  it('get a line longer than the batch buffer in one piece', async () => {
    const long = '€'.repeat(200_000)
    await withFileLogger((_tokens, req) => req.url + ' ' + long, async (port, path) => {
      await sendAll(port, ['/a', '/b', '/c'])
      const lines = (await linesOfFile(path, 3)).sort()
      assert.deepEqual(lines, ['/a ' + long, '/b ' + long, '/c ' + long])
    })
  })

  /**
   * morgan and foyer on one server, each writing `café <url>` to a file stream of its own opened
   * with `encoding`; `run` sends the requests, then the two files' bytes are returned once both
   * hold `length` bytes.
   */
  async function bothFiles (encoding: BufferEncoding | undefined, length: number,
    run: (port: number, streams: Array<ReturnType<typeof createWriteStream>>) => Promise<void>): Promise<{ foyer: Buffer, morgan: Buffer }> {
    const dir = tempDir()
    const files = { morgan: join(dir, 'morgan.log'), foyer: join(dir, 'foyer.log') }
    const format = (_tokens: unknown, req: { url?: string | undefined }): string => 'café ' + String(req.url)
    const morganStream = createWriteStream(files.morgan, { encoding })
    const foyerStream = createWriteStream(files.foyer, { encoding })
    // open before the test goes on, so that its files exist and none is still opening when the
    // directory is removed
    await Promise.all([once(morganStream, 'ready'), once(foyerStream, 'ready')])
    const server = await serve([morgan(format, { stream: morganStream }) as Middleware, logger(format, { stream: foyerStream }) as Middleware], answer())
    try {
      await run(server.port, [morganStream, foyerStream])
      await waitFor(() => readFileSync(files.foyer).length === length && readFileSync(files.morgan).length === length)
      return { foyer: readFileSync(files.foyer), morgan: readFileSync(files.morgan) }
    } finally {
      await server.close()
      morganStream.end()
      foyerStream.end()
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('write in the encoding the file stream was opened with, as morgan does', async () => {
    const expected = Buffer.from('café /x\n', 'latin1')
    const written = await bothFiles('latin1', expected.length, async (port) => { await request(port, { path: '/x' }) })
    assert.deepEqual(written.foyer, expected)
    assert.deepEqual(written.foyer, written.morgan)
  })

  it('write in the encoding the stream has when the line comes, set after the logger was made, as morgan does', async () => {
    const expected = Buffer.concat([Buffer.from('café /before\n'), Buffer.from('café /after\n', 'latin1')])
    const written = await bothFiles(undefined, expected.length, async (port, streams) => {
      await request(port, { path: '/before' })
      await settle(30)
      for (const stream of streams) stream.setDefaultEncoding('latin1')
      await request(port, { path: '/after' })
    })
    assert.deepEqual(written.foyer, expected)
    assert.deepEqual(written.foyer, written.morgan)
  })

  it('a stream decoding text as base64 gets the bytes of each line decoded on its own, as from morgan', async () => {
    const received = async (log: (stream: Writable) => Middleware): Promise<Buffer> => {
      const chunks: Buffer[] = []
      const out = new Writable({ defaultEncoding: 'base64', write (chunk: Buffer, _encoding, done) { chunks.push(chunk); done() } })
      const server = await serve([log(out)], answer())
      try {
        await sendAll(server.port, ['/QUJD', '/REVG', '/R0hJ'])
        await waitFor(() => chunks.length === 3, 3000).catch(() => undefined)
        await settle(30)
        return Buffer.concat(chunks)
      } finally {
        await server.close()
      }
    }
    const ours = await received((stream) => logger(':url', { stream }) as Middleware)
    const theirs = await received((stream) => morgan(':url', { stream }))
    assert.ok(theirs.length > 0)
    assert.deepEqual(ours, theirs)
  })

  it('a stream set to decode text as hex or base64 after the logger was made gets the bytes of each line decoded on its own, as from morgan', async () => {
    // what each write decoded to, in order of the lines' paths (requests answered together may log in any order)
    const received = async (encoding: BufferEncoding, log: (stream: Writable) => Middleware): Promise<string[]> => {
      const chunks: Buffer[] = []
      // each write takes a while: lines that come meanwhile wait together
      const out = new Writable({ write (chunk: Buffer, _encoding, done) { chunks.push(chunk); setTimeout(done, 20) } })
      const middleware = log(out)
      out.setDefaultEncoding(encoding)
      const server = await serve([middleware], answer())
      try {
        // lines of requests answered together, which one batch would hold
        const paths = ['/QUJD', '/REVG', '/R0hJ', '/SktM']
        await Promise.all(paths.map(async (path) => await request(server.port, { path })))
        await waitFor(() => chunks.length === paths.length, 3000).catch(() => undefined)
        await settle(30)
        return chunks.map((chunk) => chunk.toString('latin1')).sort()
      } finally {
        await server.close()
      }
    }
    // the path as hex for a stream decoding hex: a newline ends what hex decodes
    const hexFormat: FormatFn = (_tokens, req) => Buffer.from(req.url ?? '').toString('hex')
    for (const encoding of ['hex', 'base64'] as const) {
      const format = encoding === 'hex' ? hexFormat : ':url'
      const theirs = await received(encoding, (stream) => morgan(format, { stream }))
      const ours = await received(encoding, (stream) => logger(format, { stream }) as Middleware)
      assert.equal(theirs.length, 4)
      assert.deepEqual(ours, theirs, encoding)
    }
  })

  it('a socket that stops reading: lines wait up to maxPending, the rest are dropped and counted, the lines that arrive are whole', async () => {
    const watch = watchWarnings()
    // a log collector that reads nothing until told to
    let peer: Socket | undefined
    const received: Buffer[] = []
    const collector = createTcpServer((socket) => {
      peer = socket
      socket.pause()
      socket.on('data', (chunk: Buffer) => received.push(chunk))
    })
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
    const { port } = collector.address() as { port: number }
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    const maxPending = 256 * 1024
    const log = logger(':url :req[x-pad]', { stream: socket, maxPending })
    const server = await serve([log as Middleware], answer())
    const total = 2000
    try {
      const pad = 'p'.repeat(4000)
      await sendAll(server.port, Array.from({ length: total }, (_, i) => `/${i}`), { 'x-pad': pad })
      await settle()
      assert.ok(log.dropped > 0, 'lines were dropped once the socket and the kernel buffers were full')
      peer?.resume()
      await waitFor(() => Buffer.concat(received).toString().split('\n').length - 1 + log.dropped === total, 10_000)
      const lines = Buffer.concat(received).toString().slice(0, -1).split('\n')
      for (const line of lines) assert.match(line, /^\/\d+ p{4000}$/)
      assert.equal(new Set(lines).size, lines.length, 'no line twice')
      const reports = watch.withCode('FOYER_LOG_LINES_DROPPED')
      assert.equal(reports.length, 1)
    } finally {
      watch.stop()
      peer?.resume()
      await server.close()
      socket.destroy()
      collector.close()
    }
  })
})

// Node's own streams write through Writable.prototype.write, which calls back once a chunk is
// written; a write() replaced on a stream may never call back.
describe('a stream whose write() is replaced', () => {
  it('gets every line when a subclass\'s own write() never calls back, as morgan gives them', async () => {
    class Capture extends Writable {
      text = ''
      override write (chunk: unknown): boolean { this.text += String(chunk); return true }
    }
    const logged = async (log: (stream: Writable) => Middleware): Promise<string> => {
      const out = new Capture()
      const server = await serve([log(out)], answer())
      try {
        await sendAll(server.port, ['/a', '/b', '/c'])
        for (const path of ['/d', '/e', '/f']) {
          await request(server.port, { path })
          await settle(15)
        }
        await waitFor(() => out.text.split('\n').length === 7)
        await settle()
        return out.text
      } finally {
        await server.close()
      }
    }
    const format = (_tokens: unknown, req: { url?: string | undefined }): string => 'café ' + String(req.url)
    const foyerText = await logged((stream) => logger(format, { stream }) as Middleware)
    const morganText = await logged((stream) => morgan(format, { stream }))
    assert.deepEqual(foyerText.split('\n').sort(), morganText.split('\n').sort())
    assert.equal(foyerText.split('\n').length, 7)
  })

  it('gets every line, as text, as soon as its request is answered, when the app captures the standard output by replacing its write()', async () => {
    const capture = async (name: string): Promise<{ text: string, seen: number[] }> => {
      const { stderr } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/patched-stdout.ts'], { env: { ...process.env, LOGGER: name, COUNT: '6' } })
      return JSON.parse(stderr.slice(stderr.lastIndexOf('\n') + 1)) as { text: string, seen: number[] }
    }
    // the captured text once the sixth answer is in, and the number of writes as each came
    const expected = { text: Array.from({ length: 6 }, (_, i) => `café /${i}\n`).join(''), seen: [1, 2, 3, 4, 5, 6] }
    assert.deepEqual(await capture('morgan'), expected)
    assert.deepEqual(await capture('foyer'), expected)
  })
})

describe('writers that are not node\'s streams', () => {
  it('get every line when write() answers false and no \'drain\' ever comes, as from morgan', async () => {
    // An object passing on another stream's answer, and a subclass whose write() says false.
    class Tee extends EventEmitter {
      text = ''
      write (line: string): boolean { this.text += line; return false }
    }
    class Pessimist extends Writable {
      text = ''
      override _write (chunk: Buffer, _encoding: BufferEncoding, done: () => void): void { this.text += chunk.toString(); done() }
      override write (chunk: unknown): boolean { super.write(chunk as string); return false }
    }
    for (const make of [() => new Tee(), () => new Pessimist()]) {
      const texts: string[] = []
      for (const log of [(stream: Tee | Pessimist) => logger(':url', { stream }) as Middleware, (stream: Tee | Pessimist) => morgan(':url', { stream })]) {
        const out = make()
        const server = await serve([log(out)], answer())
        try {
          await sendAll(server.port, Array.from({ length: 20 }, (_, i) => `/${i}`))
          for (const path of ['/a', '/b']) { await request(server.port, { path }); await settle(15) }
          await waitFor(() => out.text.split('\n').length === 23)
          texts.push(out.text.split('\n').sort().join('\n'))
        } finally {
          await server.close()
        }
      }
      assert.equal(texts[0], texts[1])
    }
  })

  it('are used as they are: a frozen { write, end } and an object whose on() is not an EventEmitter\'s', async () => {
    const frozenLines: string[] = []
    const frozen = Object.freeze({ write (line: string) { frozenLines.push(line) }, end () {} })
    const flagged: string[] = []
    const flags = {
      lines: [] as string[],
      write (line: string) { this.lines.push(line) },
      on (flag: string) { if (flag !== 'verbose') throw new Error(`unknown flag ${flag}`); flagged.push(flag) },
      once (flag: string) { this.on(flag) }
    }
    const server = await serve([logger(':url', { stream: frozen }) as Middleware, logger(':url', { stream: flags }) as Middleware], answer())
    try {
      await request(server.port, { path: '/x' })
      await waitFor(() => frozenLines.length === 1 && flags.lines.length === 1)
      assert.deepEqual([frozenLines, flags.lines, flagged], [['/x\n'], ['/x\n'], []])
    } finally {
      await server.close()
    }
  })

  it('a file stream whose encoding writes no bytes for text gets nothing, and nothing is reported', async () => {
    const watch = watchWarnings()
    const dir = tempDir()
    const path = join(dir, 'hex.log')
    const file = createWriteStream(path, { encoding: 'hex' })
    // (the file exists once it is open: read below, it may not be yet on a busy machine)
    const opened = once(file, 'open')
    const log = logger(':url', { stream: file })
    const server = await serve([log as Middleware], answer())
    try {
      await sendAll(server.port, ['/a', '/b', '/c'])
      await opened
      await settle(50)
      assert.equal(log.dropped, 0)
      assert.deepEqual(watch.warnings.filter((w) => /foyer/.test(w.message)).map((w) => w.message), [])
      assert.equal(readFileSync(path).length, 0)
    } finally {
      watch.stop()
      await server.close()
      file.end()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a stream that is slow or stalls', () => {
  it('is let go of with its logger when it never calls a write back (a PassThrough nobody reads): nothing keeps it for the exit', async () => {
    const made = async (): Promise<WeakRef<Writable>> => {
      const stalled = new Writable({ write () { /* never calls back */ } })
      const server = await serve([logger(':url', { stream: stalled }) as Middleware], answer())
      try {
        await request(server.port, { path: '/stalled' })
        await settle(20)
      } finally {
        await server.close()
      }
      return new WeakRef(stalled)
    }
    const stream = await made()
    for (let i = 0; i < 20 && stream.deref() !== undefined; i++) {
      await settle(5)
      gc()
    }
    assert.equal(stream.deref(), undefined)
  })

  it('loses nothing when it catches up within maxPending', async () => {
    const held = new HeldStream(16)
    const log = logger(':url', { stream: held })
    const server = await serve([log as Middleware], answer())
    try {
      const paths = Array.from({ length: 50 }, (_, i) => `/${i}`)
      await sendAll(server.port, paths)
      held.release()
      await waitFor(() => held.received.join('').split('\n').length === 51)
      assert.deepEqual(held.received.join('').slice(0, -1).split('\n').sort(), paths.sort())
      assert.equal(log.dropped, 0)
    } finally {
      held.release()
      await server.close()
    }
  })

  it('drops and counts what passes maxPending, keeps memory bounded, and reports the count once when it drains', async () => {
    const watch = watchWarnings()
    const held = new HeldStream()
    const maxPending = 64 * 1024
    const log = logger(':url :req[x-pad]', { stream: held, maxPending })
    const server = await serve([log as Middleware], answer())
    const total = 300
    try {
      const pad = 'p'.repeat(1000)
      await sendAll(server.port, Array.from({ length: total }, (_, i) => `/${i}`), { 'x-pad': pad })
      await settle()
      // the lines the stream took while its buffer had room: the first write and those after it
      const taken = held.bytes + held.writableLength
      assert.ok(taken <= held.writableHighWaterMark + 2 * 1024, `${taken} bytes in the stream`)
      assert.ok(log.dropped > 0, 'lines were dropped')
      await held.catchUp()
      // what waited for the stream never passed the bound
      assert.ok(held.bytes <= taken + maxPending, `${held.bytes} bytes reached the stream`)
      assertDeliveredOrCounted(held, log, total, watch)
    } finally {
      watch.stop()
      held.release()
      await server.close()
    }
  })

  it('counts each line of a dropped batch of the deprecated buffer, in dropped and in the report', async () => {
    const watch = watchWarnings()
    const held = new HeldStream()
    const log = logger(':url :req[x-pad]', { stream: held, buffer: 100, maxPending: 4096 })
    const server = await serve([log as Middleware], answer())
    const wave = 20
    try {
      // Each wave's lines (about 2,200 bytes) are one interval's batch: the first is written (and
      // held), the second waits, the third passes maxPending and is dropped whole.
      for (let i = 0; i < 3; i++) {
        await Promise.all(Array.from({ length: wave }, async (_, j) => {
          await request(server.port, { path: `/${i}-${j}`, headers: { 'x-pad': 'p'.repeat(100) } })
        }))
        await settle(200)
      }
      assert.ok(log.dropped > 0, 'lines were dropped')
      await held.catchUp()
      assertDeliveredOrCounted(held, log, 3 * wave, watch)
    } finally {
      watch.stop()
      held.release()
      await server.close()
    }
  })

  it('counts each line of a batch of the deprecated buffer lost by a stream that takes one write at a time', async () => {
    const watch = watchWarnings()
    // object mode: each batch is one write; the stream fails once it drains (an app's own
    // 'drain' listener), with the second batch waiting for that 'drain'
    const written: unknown[] = []
    const stream = new Writable({ objectMode: true, highWaterMark: 1, write (chunk, _encoding, done) { written.push(chunk); setTimeout(done, 300) } })
    stream.on('error', () => {})
    stream.on('drain', () => { stream.destroy(new Error('gone')) })
    const log = logger(':url', { stream, buffer: 100 })
    const server = await serve([log as Middleware], answer())
    try {
      await Promise.all(['/a1', '/a2', '/a3'].map(async (path) => await request(server.port, { path })))
      await settle(150)
      await Promise.all(['/b1', '/b2', '/b3'].map(async (path) => await request(server.port, { path })))
      await waitFor(() => stream.destroyed)
      await settle()
      assert.ok(log.dropped > 0, 'lines were dropped')
      const delivered = (written as string[]).join('').split('\n').length - 1
      assert.equal(delivered + log.dropped, 6, 'every line is either delivered or counted')
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('drops nothing while the stream keeps up, however small maxPending is', async () => {
    // Lines of requests one after another wait for their batch (10 ms): more than 100 bytes of
    // them, which go out at once rather than be dropped.
    const out = new LineCollector()
    const log = logger(':url', { stream: out, maxPending: 100 })
    const server = await serve([log as Middleware], answer())
    try {
      const paths = Array.from({ length: 100 }, (_, i) => `/line-${i}`)
      for (const path of paths) await request(server.port, { path })
      assert.deepEqual(await out.waitForLines(100), paths)
      assert.equal(log.dropped, 0)
    } finally {
      await server.close()
    }
  })

  it('still takes a line longer than maxPending when nothing waits', async () => {
    const out = new LineCollector()
    const log = logger(':req[x-pad]', { stream: out, maxPending: 100 })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { headers: { 'x-pad': 'q'.repeat(500) } })
      assert.deepEqual(await out.waitForLines(1), ['q'.repeat(500)])
      assert.equal(log.dropped, 0)
    } finally {
      await server.close()
    }
  })

  it('goes on writing while another writer keeps the stream\'s buffer from ever emptying, so that no \'drain\' comes, as morgan goes on', async () => {
    // Another writer adds a chunk each time one is written: the stream keeps up, yet is never
    // empty, and a 'drain' comes only once it is.
    const watch = watchWarnings()
    let busy = true
    let text = ''
    const stream: Writable = new Writable({
      highWaterMark: 1,
      write (chunk: Buffer, _encoding, done) {
        text += chunk.toString()
        if (busy) stream.write('other\n')
        setImmediate(done)
      }
    })
    stream.write('other\n')
    const log = logger(':url', { stream, maxPending: 1000 })
    const server = await serve([log as Middleware], answer())
    try {
      const paths = Array.from({ length: 50 }, (_, i) => `/line-${i}`)
      for (const path of paths) await request(server.port, { path })
      const ours = (): string[] => text.split('\n').filter((line) => line.startsWith('/'))
      await waitFor(() => ours().length === paths.length, 5000).catch(() => undefined)
      assert.deepEqual(ours(), paths)
      assert.equal(log.dropped, 0)
      assert.deepEqual(watch.warnings.filter((w) => /foyer/.test(w.message)).map((w) => w.message), [])
    } finally {
      busy = false
      watch.stop()
      await server.close()
    }
  })

  it('reports the lines it dropped when the app ends a stream that never caught up', async () => {
    const watch = watchWarnings()
    const held = new HeldStream()
    const log = logger(':url :req[x-pad]', { stream: held, maxPending: 300 })
    const server = await serve([log as Middleware], answer())
    try {
      // (about 10 of them fill the stream's buffer, of 1 kB)
      for (let i = 0; i < 20; i++) await request(server.port, { path: `/${i}`, headers: { 'x-pad': 'p'.repeat(100) } })
      await settle(30)
      assert.ok(log.dropped > 0)
      assert.equal(watch.withCode('FOYER_LOG_LINES_DROPPED').length, 0, 'nothing drained yet')
      held.end()
      await settle()
      const reports = watch.withCode('FOYER_LOG_LINES_DROPPED')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', new RegExp(`^foyer/logger: ${log.dropped} log lines were dropped`))
    } finally {
      watch.stop()
      held.release()
      await server.close()
    }
  })
})

describe('a stream the app ends', () => {
  /** A byte stream that completes each write `delay` ms after taking it. */
  class SlowStream extends Writable {
    text = ''
    constructor (private readonly delay: number, highWaterMark?: number) { super({ highWaterMark }) }
    override _write (chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
      this.text += chunk.toString()
      setTimeout(done, this.delay)
    }
  }

  // What the app's replacement of write() does, what reaches the stream, the lines counted dropped.
  type Write = (this: Writable, ...args: unknown[]) => boolean
  const replacedAtEnd: Array<[string, (write: Write) => Write, string, number]> = [
    ['calls the original, as a spy (jest.spyOn) does: the line counts as written', (write) => function (this: Writable, ...args: unknown[]): boolean { return write.apply(this, args) }, '/1\n/2\n', 0],
    ['throws: the line is counted dropped once, not again once the stream has closed', () => () => { throw new Error('the spy throws') }, '/1\n', 1]
  ]
  for (const [what, replace, text, dropped] of replacedAtEnd) {
    it(`hands a line to it at end() through a write() the app replaced, which ${what}`, async () => {
      // The first line's write takes 30 ms and fills the stream's buffer (of one byte); the
      // second line waits for it. The app then replaces write() and ends the stream, which takes
      // the second line through the replacement.
      const out = new SlowStream(30, 1)
      const log = logger(':url', { stream: out })
      const server = await serve([log as Middleware], answer())
      const watch = watchWarnings()
      try {
        await request(server.port, { path: '/1' })
        await request(server.port, { path: '/2' })
        out.write = replace(out.write as Write)
        out.end()
        await new Promise((resolve) => out.on('close', resolve))
        // past the grace after 'close' in which a write not called back counts as lost
        await settle(1200)
        assert.equal(out.text, text)
        assert.equal(log.dropped, dropped)
        assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, dropped === 0 ? 0 : 1)
      } finally {
        watch.stop()
        await server.close()
      }
    })
  }

  it('counts every line that comes after it ended, also those of responses finishing together past maxPending', async () => {
    // a file stream: the first line waits for its batch
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const out = createWriteStream(path)
    const log = logger(':url', { stream: out, maxPending: 20 })
    out.end()
    const waiting: ServerResponse[] = []
    const server = await serve([log as Middleware], (_req, res) => {
      // the three are answered in one turn
      waiting.push(res)
      if (waiting.length === 3) for (const each of waiting) each.end('ok')
    })
    try {
      await Promise.all(['/first-line', '/second-line', '/third-line'].map(async (path) => await request(server.port, { path })))
      await settle(20)
      assert.equal(readFileSync(path, 'utf8'), '')
      assert.equal(log.dropped, 3)
    } finally {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('gets the lines of the responses answered before its end(), as morgan writes them', async () => {
    // The first line's write takes 200 ms; /last answers meanwhile, and the app ends the stream
    // as soon as the client has its answer: the line of /last must come before the end.
    const ended = async (log: (stream: Writable) => Middleware): Promise<string> => {
      const out = new SlowStream(200)
      const server = await serve([log(out)], answer())
      try {
        await request(server.port, { path: '/first' })
        await waitFor(() => out.text !== '')
        await request(server.port, { path: '/last' })
        await settle(10)
        out.end()
        await new Promise((resolve) => out.on('finish', resolve))
        return out.text
      } finally {
        await server.close()
      }
    }
    const foyerText = await ended((stream) => logger(':method :url :status', { stream }) as Middleware)
    const morganText = await ended((stream) => morgan(':method :url :status', { stream }))
    assert.equal(morganText, 'GET /first 200\nGET /last 200\n')
    assert.equal(foyerText, morganText)
  })

  for (const where of ['a \'finish\' listener', 'the callback of res.end()']) {
    it(`gets the line of the last response when the app ends it in ${where}, as morgan writes it up to Node.js 22`, async () => {
      // The line is made when the response closes, a tick after 'finish': the stream's end()
      // must make the lines still owed before it ends.
      const ended = async (log: (stream: Writable) => Middleware): Promise<string> => {
        const dir = tempDir()
        const path = join(dir, 'access.log')
        const file = createWriteStream(path)
        const server = await serve([log(file)], (req, res) => {
          const last = req.url === '/last'
          if (last && where === 'a \'finish\' listener') res.on('finish', () => file.end())
          res.end('ok', last && where !== 'a \'finish\' listener' ? () => file.end() : undefined)
        })
        try {
          await request(server.port, { path: '/first' })
          await request(server.port, { path: '/last' })
          await closeOf(file)
          return readFileSync(path, 'utf8')
        } finally {
          await server.close()
          rmSync(dir, { recursive: true, force: true })
        }
      }
      const foyerText = await ended((stream) => logger(':method :url :status', { stream }) as Middleware)
      assert.equal(foyerText, 'GET /first 200\nGET /last 200\n')
      // From Node.js 24 the callback of res.end() runs before 'finish', where morgan writes its
      // line: there morgan's line meets the ended stream, and only the 'finish' listener compares.
      if (where !== 'a \'finish\' listener' && Number(process.versions.node.split('.')[0]) >= 24) return
      const morganText = await ended((stream) => morgan(':method :url :status', { stream }))
      assert.equal(foyerText, morganText)
    })
  }

  it('gets every line when it is an object-mode stream behind on its writes, as morgan gives them', async () => {
    // write() returns false for every line: the lines wait for 'drain', which a stream that is
    // ending no longer emits; its end() must hand them over.
    const ended = async (log: (stream: Writable) => Middleware): Promise<string[]> => {
      const lines: string[] = []
      const out = new Writable({
        objectMode: true,
        highWaterMark: 1,
        write (line: string, _encoding, done) { lines.push(line); setTimeout(done, 5) }
      })
      const server = await serve([log(out)], answer())
      const paths = Array.from({ length: 30 }, (_, i) => `/${i}`)
      await Promise.all(paths.map(async (path) => await request(server.port, { path })))
      await server.close()
      out.end()
      await new Promise((resolve) => out.on('finish', resolve))
      return lines.sort()
    }
    const watch = watchWarnings()
    try {
      let log: ReturnType<typeof logger> | undefined
      const foyerLines = await ended((stream) => (log = logger(':url', { stream })) as Middleware)
      const morganLines = await ended((stream) => morgan(':url', { stream }))
      assert.equal(morganLines.length, 30)
      assert.deepEqual(foyerLines, morganLines)
      await settle(10)
      assert.equal(log?.dropped, 0)
      assert.deepEqual(watch.warnings.filter((w) => /foyer/.test(w.message)).map((w) => w.message), [], 'nothing dropped or reported')
    } finally {
      watch.stop()
    }
  })

  it('gets every line in its file when the app ends a file stream once the server has closed', async () => {
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const file = createWriteStream(path)
    const server = await serve([logger(':url', { stream: file }) as Middleware], answer())
    try {
      const paths = Array.from({ length: 20 }, (_, i) => `/${i}`)
      for (const p of paths) await request(server.port, { path: p })
      await server.close()
      file.end()
      await closeOf(file)
      assert.deepEqual(readFileSync(path, 'utf8').slice(0, -1).split('\n'), paths)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('gets the lines of the responses answered before the app destroys it, as morgan writes them', async () => {
    // A socket to a log collector, destroyed at shutdown: lines the batch still holds go out first.
    const destroyed = async (log: (stream: Writable) => Middleware): Promise<string> => {
      let received = ''
      const collector = createTcpServer((socket) => { socket.on('data', (chunk: Buffer) => { received += chunk.toString() }) })
      collector.listen(0, '127.0.0.1')
      await once(collector, 'listening')
      const stream = connect((collector.address() as AddressInfo).port, '127.0.0.1')
      await once(stream, 'connect')
      const server = await serve([log(stream)], answer())
      try {
        for (let i = 0; i < 5; i++) await request(server.port, { path: `/r${i}` })
        stream.destroy()
        await waitFor(() => received.split('\n').length > 5, 1000).catch(() => {})
        return received
      } finally {
        await server.close()
        collector.close()
      }
    }
    const foyerText = await destroyed((stream) => logger(':url', { stream }) as Middleware)
    const morganText = await destroyed((stream) => morgan(':url', { stream }))
    assert.equal(morganText, '/r0\n/r1\n/r2\n/r3\n/r4\n')
    assert.equal(foyerText, morganText)
  })

  /**
   * A logger of `:url` on a file stream that the app destroys, in `handler` or through `prepare`,
   * once /last has been answered: the line is in the file, nothing is dropped nor reported, and a
   * line that comes after is counted, and said so once.
   */
  async function destroyedByTheApp (handler: (file: WriteStream) => Handler, prepare: (file: WriteStream) => void = () => {}): Promise<void> {
    const watch = watchWarnings()
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const file = createWriteStream(path)
    await once(file, 'ready')
    prepare(file)
    const log = logger(':url', { stream: file })
    const server = await serve([log as Middleware], handler(file))
    try {
      await request(server.port, { path: '/last' })
      await closeOf(file)
      await settle()
      assert.equal(readFileSync(path, 'utf8'), '/last\n')
      assert.equal(log.dropped, 0)
      assert.deepEqual(watch.withCode('FOYER_LOG_STREAM_ERROR').map((w) => w.message), [])
      await request(server.port, { path: '/after' })
      await settle()
      assert.equal(log.dropped, 1)
      const reports = watch.withCode('FOYER_LOG_STREAM_ERROR')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', /the stream was (destroyed|ended)/)
    } finally {
      watch.stop()
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('reports nothing when the app destroys its file stream in a \'finish\' listener: the line is in the file', async () => {
    // destroy() writes the line the batch holds, and the file stream reports that write, which
    // its destroy() overtook once the bytes were in the file, as destroyed (ERR_STREAM_DESTROYED)
    await destroyedByTheApp((file) => (_req, res) => {
      res.on('finish', () => { file.destroy() })
      res.end('ok')
    })
  })

  it('reports nothing when the app ends, then destroys, its file stream in a \'finish\' listener: the line is in the file', async () => {
    await destroyedByTheApp((file) => (_req, res) => {
      res.on('finish', () => { file.end(); file.destroy() })
      res.end('ok')
    })
  })

  it('reports nothing when the app destroys its file stream while a batch is being written to it: the line is in the file', async () => {
    // the app's destroy() comes once the first batch has gone to the file, before it is done
    await destroyedByTheApp(() => answer(), (file) => {
      const write = file._write.bind(file)
      let first = true
      file._write = (chunk: Buffer, encoding: BufferEncoding, done: (err?: Error | null) => void) => {
        write(chunk, encoding, done)
        if (first) { first = false; process.nextTick(() => file.destroy()) }
      }
    })
  })

  /**
   * A file stream whose opening and writes each take `delay` ms (a slow or network file system),
   * and a logger of `:url` on it; `check` runs with them, and everything is removed afterwards.
   */
  async function withSlowFile (delay: { open: number, write: number }, check: (file: WriteStream, log: Middleware & { dropped: number }, port: number, path: string) => Promise<void>): Promise<void> {
    const dir = tempDir()
    const path = join(dir, 'access.log')
    const slow = {
      open: (...args: Parameters<typeof fsOpen>) => { setTimeout(() => { fsOpen(...args) }, delay.open) },
      write: (...args: Parameters<typeof fsWrite>) => { setTimeout(() => { fsWrite(...args) }, delay.write) },
      writev: (...args: Parameters<typeof fsWritev>) => { setTimeout(() => { fsWritev(...args) }, delay.write) },
      close: fsClose
    }
    const file = createWriteStream(path, { fs: slow } as unknown as Parameters<typeof createWriteStream>[1])
    const log = logger(':url', { stream: file })
    const server = await serve([log as Middleware], answer())
    try {
      await check(file, log, server.port, path)
    } finally {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }

  /**
   * The file's text, the logger's `dropped` and the number of stream failures reported, once the
   * app has destroyed a slow file stream after `send`.
   */
  async function destroyedWhileSlow (delay: { open: number, write: number }, send: (port: number, file: WriteStream) => Promise<void>): Promise<[string, number, number]> {
    const watch = watchWarnings()
    try {
      let seen: [string, number, number] = ['', 0, 0]
      await withSlowFile(delay, async (file, log, port, path) => {
        await send(port, file)
        file.destroy()
        await closeOf(file)
        await settle()
        seen = [readFileSync(path, 'utf8'), log.dropped, watch.withCode('FOYER_LOG_STREAM_ERROR').length]
      })
      return seen
    } finally {
      watch.stop()
    }
  }

  it('counts and reports the lines of a file stream the app destroys before it has opened', async () => {
    const seen = await destroyedWhileSlow({ open: 300, write: 0 }, async (port) => {
      await request(port, { path: '/never' })
      await settle(50)
    })
    assert.deepEqual(seen, ['', 1, 1])
  })

  it('counts only the lines a file stream had not started writing when the app destroyed it', async () => {
    const seen = await destroyedWhileSlow({ open: 0, write: 200 }, async (port, file) => {
      await once(file, 'ready')
      await request(port, { path: '/a' })
      await settle(50)
      // /a is being written; /b waits for it
      await request(port, { path: '/b' })
    })
    assert.deepEqual(seen, ['/a\n', 1, 1])
  })

  it('counts only the lines a file stream writing text (one with an fs of its own) still held when the app destroyed it, not the one it was writing', async () => {
    const seen = await destroyedWhileSlow({ open: 0, write: 200 }, async (port, file) => {
      await once(file, 'ready')
      await request(port, { path: '/a' })
      await settle(50)
      // /a is being written; the others wait for it, and are handed to the stream at its destroy()
      for (const path of ['/b', '/c', '/d']) await request(port, { path })
    })
    assert.deepEqual(seen, ['/a\n', 3, 1])
  })

  it('counts every line whose write the stream has not completed a second after the app destroyed it, those it still buffered and those that come after at once, and says so once', async () => {
    // as a Transform nobody reads holds a write without calling it back: node never will once it is destroyed
    const watch = watchWarnings()
    const stream = new HeldStream()
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      await sendAll(server.port, Array.from({ length: 30 }, (_, i) => `/${i}`))
      await settle()
      stream.destroy()
      await closeOf(stream)
      await request(server.port, { path: '/after' })
      await settle()
      assert.equal(log.dropped, 30, 'the 29 lines the stream buffered behind the write it holds, and the line that came after, at once')
      await waitFor(() => log.dropped === 31, 3000)
      assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts nothing when the app destroys a stream whose write completes after its \'close\', as a stream of the app\'s own may', async () => {
    const watch = watchWarnings()
    let text = ''
    const stream = new Writable({ write (chunk: Buffer, _encoding, done) { setTimeout(() => { text += chunk.toString(); done() }, 50) } })
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { path: '/last' })
      stream.destroy()
      await closeOf(stream)
      await settle(1300)
      assert.equal(text, '/last\n')
      assert.equal(log.dropped, 0)
      assert.deepEqual(watch.withCode('FOYER_LOG_STREAM_ERROR').map((w) => w.message), [])
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts nothing when the app destroys a stream whose write completes after its \'close\', under fake timers installed before the logger was loaded', async () => {
    // (without its cache: see the fixture of fake timers at load, above)
    const { stderr } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/fake-timers-destroy.ts'], { env: { ...process.env, TSX_DISABLE_CACHE: '1' } })
    assert.deepEqual(JSON.parse(stderr.slice(stderr.lastIndexOf('\n') + 1)), { text: '/last\n', dropped: 0, warnings: [] })
  })

  it('goes on writing to a stream on which the app emitted \'close\' by hand while it still works, as morgan does', async () => {
    // Each write completes 20 ms later: the 'close' comes while the first one is in progress, and,
    // for the object-mode stream (one line at a time, write() answering false), while a 'drain'
    // is awaited.
    const written = async (objectMode: boolean): Promise<string[]> => {
      const watch = watchWarnings()
      const lines: string[] = []
      const out = new Writable({ objectMode, highWaterMark: objectMode ? 1 : 16384, write (chunk: Buffer | string, _encoding, done) { setTimeout(() => { lines.push(chunk.toString()); done() }, 20) } })
      const log = logger(':url', { stream: out })
      const server = await serve([log as Middleware], answer())
      try {
        await request(server.port, { path: '/1' })
        out.emit('close')
        await request(server.port, { path: '/2' })
        await waitFor(() => lines.join('') === '/1\n/2\n', 3000).catch(() => undefined)
        assert.equal(log.dropped, 0)
        assert.deepEqual(watch.warnings.filter((w) => /foyer/.test(w.message)).map((w) => w.message), [])
        return lines
      } finally {
        watch.stop()
        await server.close()
      }
    }
    assert.deepEqual(await written(false), ['/1\n', '/2\n'])
    assert.deepEqual(await written(true), ['/1\n', '/2\n'])
  })

  it('counts the line it wrote as the app destroyed a stream that then reports that write destroyed, and says so once', async () => {
    // unlike a file stream's, this stream's write does not complete once destroy() has come
    const watch = watchWarnings()
    let received = ''
    const stream = new Writable({
      write (chunk: Buffer, _encoding, done) {
        setImmediate(() => {
          if (stream.destroyed) done(Object.assign(new Error('Cannot call write after a stream was destroyed'), { code: 'ERR_STREAM_DESTROYED' }))
          else { received += chunk.toString(); done() }
        })
      }
    })
    stream.on('error', () => {})
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], (_req, res) => {
      res.on('finish', () => { stream.destroy() })
      res.end('ok')
    })
    try {
      await request(server.port, { path: '/lost' })
      await settle()
      assert.equal(received, '')
      assert.equal(log.dropped, 1)
      const reports = watch.withCode('FOYER_LOG_STREAM_ERROR')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', /the stream was destroyed before it had written the lines/)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts the lines that come after its end, and says so once', async () => {
    const watch = watchWarnings()
    const out = new LineCollector()
    const log = logger(':url', { stream: out })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { path: '/before' })
      out.end()
      for (let i = 0; i < 3; i++) await request(server.port, { path: '/after' })
      await settle()
      assert.deepEqual(out.lines, ['/before'])
      assert.equal(log.dropped, 3)
      const reports = watch.withCode('FOYER_LOG_STREAM_ERROR')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', /the stream was ended/)
    } finally {
      watch.stop()
      await server.close()
    }
  })
})

describe('a stream that fails', () => {
  it('does not take the server down, is reported once, and later lines are counted as dropped', async () => {
    const watch = watchWarnings()
    const broken = new Writable({ write (_chunk, _encoding, done) { done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) } })
    const log = logger(':url', { stream: broken })
    const server = await serve([log as Middleware], answer())
    try {
      for (let i = 0; i < 10; i++) assert.equal((await request(server.port, { path: `/${i}` })).body, 'ok')
      await settle()
      const reports = watch.withCode('FOYER_LOG_STREAM_ERROR')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', /write EPIPE/)
      // every line, the one whose write failed included
      assert.equal(log.dropped, 10)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('keeps writing to a stream that still works after an \'error\' emitted on it, as morgan goes on writing, and reports its failure later too', async () => {
    const watch = watchWarnings()
    const out = new LineCollector()
    out.on('error', () => { /* the app's own listener */ })
    const log = logger(':url', { stream: out })
    const server = await serve([log as Middleware], answer())
    const reports = (): string[] => watch.withCode('FOYER_LOG_STREAM_ERROR').map((w) => w.message)
    try {
      for (let i = 0; i < 5; i++) {
        await request(server.port, { path: `/${i}` })
        if (i === 1) out.emit('error', new Error('a transport hiccup'))
      }
      await out.waitForLines(5)
      assert.deepEqual(out.lines, ['/0', '/1', '/2', '/3', '/4'])
      assert.equal(log.dropped, 0)
      await waitFor(() => reports().length === 1)
      assert.match(reports()[0] ?? '', /transport hiccup/)
      // then it really fails: that is reported as well, and later lines are counted
      out.destroy(new Error('write EPIPE'))
      for (let i = 5; i < 8; i++) await request(server.port, { path: `/${i}` })
      await waitFor(() => reports().length === 2)
      assert.match(reports()[1] ?? '', /write EPIPE/)
      assert.equal(log.dropped, 3)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('does not take the server down when the log file cannot be opened', async () => {
    const watch = watchWarnings()
    const stream = createWriteStream(join(tmpdir(), 'foyer-no-such-dir', String(process.pid), 'access.log'))
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      for (let i = 0; i < 5; i++) assert.equal((await request(server.port, { path: `/${i}` })).status, 200)
      await settle()
      const reports = watch.withCode('FOYER_LOG_STREAM_ERROR')
      assert.equal(reports.length, 1)
      assert.match(reports[0]?.message ?? '', /ENOENT/)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts only the line a stream of records refused, not those written before it in the same turn', async () => {
    // each chunk is one record sent to a service, which refuses the third (in its callback, or
    // by throwing from write())
    for (const refuse of ['callback', 'throw'] as const) {
      const watch = watchWarnings()
      const records: string[] = []
      const service = new Writable({
        write (chunk: Buffer, _encoding, done) {
          const record = chunk.toString()
          if (refuse === 'throw') {
            // synchronous: write() calls this at once, and the throw reaches the caller
            if (record.startsWith('c ')) throw new Error('refused')
            records.push(record)
            done()
            return
          }
          setImmediate(() => {
            if (record.startsWith('c ')) { done(new Error('refused')); return }
            records.push(record)
            done()
          })
        }
      })
      service.on('error', () => {})
      const loggers = ['a', 'b', 'c'].map((name) => logger(`${name} :url`, { stream: service }))
      const server = await serve(loggers as Middleware[], answer())
      try {
        await request(server.port, { path: '/x' })
        await waitFor(() => loggers.reduce((n, log) => n + log.dropped, 0) > 0)
        await settle(30)
        assert.deepEqual(records, ['a /x\n', 'b /x\n'], refuse)
        assert.deepEqual(loggers.map((log) => log.dropped), [0, 0, 1], refuse)
      } finally {
        watch.stop()
        await server.close()
      }
    }
  })

  it('counts a line whose write() threw once, also after the stream closes', async () => {
    const watch = watchWarnings()
    let calls = 0
    let completeFirst = (): void => {}
    // the first write completes when the test says, and fills the stream's buffer (of one byte);
    // the second throws at once: the first line of those that waited for the first write
    const stream = new Writable({
      highWaterMark: 1,
      write (_chunk, _encoding, done) {
        calls++
        if (calls === 1) completeFirst = () => { done() }
        else if (calls === 2) throw new Error('refused')
        else done()
      }
    })
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { path: '/first' })
      for (const path of ['/a', '/b', '/c']) await request(server.port, { path })
      await settle()
      completeFirst()
      await waitFor(() => log.dropped === 3)
      stream.destroy()
      await closeOf(stream)
      // past the second in which a write not called back after the stream closed is counted
      await settle(1300)
      assert.equal(log.dropped, 3)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts the lines it held for each logger when the stream fails while they wait', async () => {
    const watch = watchWarnings()
    // (the first line fills the stream's buffer, of one byte)
    const held = new HeldStream(1)
    const a = logger(':url', { stream: held, skip: (req) => !(req.url ?? '').startsWith('/a') })
    const b = logger(':url', { stream: held, skip: (req) => !(req.url ?? '').startsWith('/b') })
    const server = await serve([a as Middleware, b as Middleware], answer())
    try {
      await request(server.port, { path: '/a0' })
      await waitFor(() => held.received.length === 1)
      // These wait for the write of /a0: three of a, two of b, one of a, in that order.
      for (const path of ['/a1', '/a2', '/a3', '/b1', '/b2', '/a4']) await request(server.port, { path })
      await settle(30)
      held.destroy(new Error('disk gone'))
      await settle()
      assert.deepEqual([a.dropped, b.dropped], [4, 2])
      // /a0 too, once its write has not completed a second after the stream closed
      await waitFor(() => a.dropped === 5, 3000)
      assert.deepEqual([a.dropped, b.dropped], [5, 2])
      assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
      await request(server.port, { path: '/a5' })
      await request(server.port, { path: '/b3' })
      assert.deepEqual([a.dropped, b.dropped], [6, 3])
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts the lines it handed to a stream beside a write in progress when the stream fails and never completes them', async () => {
    const watch = watchWarnings()
    // (the stream's buffer has room for all the lines: they are in it when it fails)
    const held = new HeldStream(1 << 20)
    const log = logger(':url', { stream: held })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { path: '/0' })
      await waitFor(() => held.received.length === 1)
      for (const path of ['/1', '/2', '/3']) await request(server.port, { path })
      assert.equal(held.writableLength, '/0\n/1\n/2\n/3\n'.length, 'the stream holds them all')
      held.destroy(new Error('disk gone'))
      await settle()
      assert.equal(log.dropped, 3, 'the lines still in its buffer, at once')
      // and the line of the write it holds, once that has not completed a second after it closed
      await waitFor(() => log.dropped === 4, 3000)
      await settle()
      assert.equal(log.dropped, 4)
      assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  for (const [how, error] of [['with an error, as pipeline() destroys it when the other end fails', new Error('downstream failed')], ['by the app, without an error', undefined]] as const) {
    it(`counts at once the lines a stream still buffers when it is destroyed ${how}, also one that emits no 'close'`, async () => {
      const watch = watchWarnings()
      // Nobody reads it: it passes a few lines on to its readable side, and holds the next one in
      // a write that never completes, and those after it in its buffer. Node calls none of these
      // back, and a stream made with emitClose: false says nothing more once destroyed.
      const out = new PassThrough({ highWaterMark: 8, emitClose: false })
      out.on('error', () => {})
      const log = logger(':url', { stream: out })
      const server = await serve([log as Middleware], answer())
      try {
        for (let i = 0; i < 6; i++) await request(server.port, { path: `/${i}` })
        const passedOn = out.readableLength / '/0\n'.length
        assert.ok(passedOn > 0 && passedOn < 5, `${passedOn} lines passed on`)
        out.destroy(error)
        // (well within the second after which a write not called back counts as lost)
        await settle()
        assert.equal(log.dropped, 6 - passedOn)
        assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
      } finally {
        watch.stop()
        await server.close()
      }
    })
  }

  it('counts nothing of the lines a stream took in its writev() and then destroyed itself there, as a collector that closes once it has what it needs may', { timeout: 10_000 }, async () => {
    const watch = watchWarnings()
    const got: string[] = []
    const stream = new Writable({
      // the first write completes later: the lines after it reach writev() together
      write (chunk: Buffer, _encoding, done) { got.push(chunk.toString()); setTimeout(done, 50) },
      writev (chunks: Array<{ chunk: Buffer }>, done) {
        for (const { chunk } of chunks) got.push(chunk.toString())
        this.destroy()
        setImmediate(done)
      }
    })
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      await Promise.all(Array.from({ length: 10 }, async (_, i) => await request(server.port, { path: `/${i}` })))
      await closeOf(stream)
      await settle()
      assert.ok(got.length > 1, 'writev() took lines')
      assert.equal(got.join('').split('\n').length - 1, 10)
      assert.equal(log.dropped, 0)
      assert.deepEqual(watch.withCode('FOYER_LOG_STREAM_ERROR').map((w) => w.message), [])
    } finally {
      watch.stop()
      await server.close()
    }
  })

  for (const [how, error] of [['with an error', new Error('downstream failed')], ['by the app, without an error', undefined]] as const) {
    it(`goes on when a stream of the app's cannot show its buffer as it is destroyed ${how}`, { timeout: 10_000 }, async () => {
      const watch = watchWarnings()
      class Strict extends Writable {
        get writableBuffer (): never { throw new Error('writableBuffer not supported') }
      }
      const stream = new Strict({ write (_chunk, _encoding, done) { setTimeout(done, 100) } })
      stream.on('error', () => {})
      const log = logger(':url', { stream })
      const server = await serve([log as Middleware], answer())
      try {
        await request(server.port, { path: '/a' })
        await request(server.port, { path: '/b' })
        stream.destroy(error)
        assert.equal(stream.destroyed, true)
        await closeOf(stream)
        await settle()
        assert.equal((await request(server.port, { path: '/after' })).status, 200)
        assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
      } finally {
        watch.stop()
        await server.close()
      }
    })
  }

  it('lets a stream destroy itself from its own write(), and counts the lines it had not taken', { timeout: 10_000 }, async () => {
    const watch = watchWarnings()
    const got: string[] = []
    const stream = new Writable({
      // the first write completes later: the lines after it reach write() one by one, and the
      // second of them closes the stream
      write (chunk: Buffer, _encoding, done) {
        got.push(chunk.toString())
        if (got.length === 1) { setTimeout(done, 50); return }
        if (got.length === 3) this.destroy()
        done()
      }
    })
    const log = logger(':url', { stream })
    const server = await serve([log as Middleware], answer())
    try {
      await Promise.all(Array.from({ length: 6 }, async (_, i) => await request(server.port, { path: `/${i}` })))
      await closeOf(stream)
      await settle()
      assert.equal(stream.destroyed, true)
      assert.equal(got.length, 3)
      assert.equal(log.dropped, 3)
      assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('counts the lines a stream still buffers when the app destroys it and exits in the same turn', async () => {
    const { stderr } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/destroy-then-exit.ts'], { env: { ...process.env, TSX_DISABLE_CACHE: '1' } })
    // the first line is in the write that never completes; the four after it wait in the buffer
    assert.deepEqual(JSON.parse(stderr.slice(stderr.lastIndexOf('\n') + 1)), { reached: 1, dropped: 4 })
  })

  it('counts lines for a stream that was destroyed, and says so once', async () => {
    const watch = watchWarnings()
    const out = new LineCollector()
    const log = logger(':url', { stream: out })
    const server = await serve([log as Middleware], answer())
    try {
      await request(server.port, { path: '/before' })
      await out.waitForLines(1)
      out.destroy()
      for (let i = 0; i < 3; i++) await request(server.port, { path: '/after' })
      await settle()
      assert.equal(log.dropped, 3)
      assert.equal(watch.withCode('FOYER_LOG_STREAM_ERROR').length, 1)
    } finally {
      watch.stop()
      await server.close()
    }
  })

  it('keeps a server answering when its standard output is a closed pipe (EPIPE)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/epipe-server.ts'], { stdio: ['ignore', 'pipe', 'pipe'] })
    try {
      const port = await portOf(child)
      child.stdout?.destroy()
      for (let i = 0; i < 20; i++) assert.equal((await request(port, { path: `/${i}` })).body, 'still here')
      await waitFor(() => stderrOf(child).includes('FOYER_LOG_STREAM_ERROR'))
      await settle(50)
      assert.equal(stderrOf(child).split('FOYER_LOG_STREAM_ERROR').length - 1, 1, stderrOf(child))
      assert.match(stderrOf(child), /EPIPE/)
      assert.equal(child.exitCode, null, 'still running')
    } finally {
      child.kill()
    }
  })
})

const stderrs = new WeakMap<ChildProcess, string>()
function stderrOf (child: ChildProcess): string { return stderrs.get(child) ?? '' }

async function portOf (child: ChildProcess): Promise<number> {
  stderrs.set(child, '')
  child.stderr?.on('data', (chunk: Buffer) => { stderrs.set(child, stderrOf(child) + chunk.toString()) })
  await waitFor(() => /port \d+/.test(stderrOf(child)), 10_000)
  return Number(/port (\d+)/.exec(stderrOf(child))?.[1])
}

describe('lines at exit', () => {
  /**
   * One request over HTTP/2 (cleartext); settles when its stream closes, or the server goes away.
   * With `read` false, the response's body is never read.
   */
  async function http2Get (port: number, path: string, read = true): Promise<void> {
    const session = http2Connect(`http://127.0.0.1:${port}`)
    session.on('error', () => { /* the server may exit meanwhile */ })
    await new Promise<void>((resolve) => {
      const stream = session.request({ ':path': path })
      stream.on('error', () => { resolve() })
      stream.on('close', () => { resolve() })
      if (read) stream.resume()
      stream.end()
    })
    session.destroy()
  }

  /**
   * Sends one HTTP/1.1 request, over TLS with `tls`, whose response is never read: the caller
   * destroys the socket.
   */
  function getUnread (port: number, path: string, tls: boolean): Socket {
    const socket = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1')
    socket.on('error', () => { /* the server exits meanwhile */ })
    socket.pause()
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
    return socket
  }

  /** One request over HTTPS, its answer read; settles when it ends, or the server goes away. */
  async function httpsGet (port: number, path: string): Promise<void> {
    await new Promise<void>((resolve) => {
      const req = httpsRequest({ port, host: '127.0.0.1', path, rejectUnauthorized: false }, (res) => {
        res.on('error', () => { resolve() })
        res.on('close', () => { resolve() })
        res.resume()
      })
      req.on('error', () => { resolve() })
      req.end()
    })
  }

  /**
   * The lines logged, in order, except that for a file stream the two may come in either order:
   * the first line's batch may be in node's thread pool, being written, when the process exits,
   * and the second, written at exit, may reach the file first.
   */
  function inOrder (logged: string, dest: string): string {
    return dest === 'file' ? logged.split('\n').sort().join('\n').slice(1) + '\n' : logged
  }

  async function runExit (mode: string, dest: 'file' | 'stdout' | 'utf16le' | 'positioned', protocol: 'http' | 'http2' | 'https' = 'http'): Promise<{ logged: string, code: number | null }> {
    const dir = tempDir()
    const file = join(dir, 'access.log')
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/exit-server.ts'], {
      env: { ...process.env, MODE: mode, DEST: dest, LOG_FILE: file, HTTP2: protocol === 'http2' ? '1' : '0', HTTPS: protocol === 'https' ? '1' : '0' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      const port = await portOf(child)
      const read = !mode.endsWith('-while-sending')
      let unread: Socket | undefined
      if (protocol === 'http2') await http2Get(port, '/last', read)
      else if (!read) unread = getUnread(port, '/last', protocol === 'https')
      else if (protocol === 'https') await httpsGet(port, '/last')
      else await request(port, { path: '/last' }).catch(() => undefined)
      if (mode === 'sigterm') child.kill('SIGTERM')
      const code = await exited
      unread?.destroy()
      await new Promise((resolve) => setImmediate(resolve))
      return { logged: dest === 'stdout' ? stdout : readFileSync(file, dest === 'utf16le' ? 'utf16le' : 'utf8'), code }
    } finally {
      child.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  }

  // mode of the fixture, destination, exit code, what ends the process
  const endings: Array<[string, 'file' | 'stdout', number, string]> = [
    ['exit', 'file', 0, 'the app calls process.exit() right after logging'],
    ['exit', 'stdout', 0, 'the app calls process.exit() right after logging'],
    ['exit-in-finish', 'file', 0, 'the callback of res.end() calls process.exit()'],
    ['exit-in-finish', 'stdout', 0, 'the callback of res.end() calls process.exit()'],
    ['exit-after-end', 'file', 0, 'the app calls process.exit() right after res.end()'],
    ['exit-among-many', 'file', 0, 'the app calls process.exit() right after res.end(), with over a thousand responses their connections never take ending before and after it'],
    ['throw-in-finish', 'file', 1, 'a \'finish\' listener throws and the uncaught exception ends the process'],
    ['throw', 'file', 1, 'an uncaught exception ends the process'],
    ['sigterm', 'file', 0, 'the app handles SIGTERM by exiting'],
    ['end-stream', 'file', 0, 'the app ends it once the server has closed'],
    ['end-stream', 'stdout', 0, 'the app ends it once the server has closed']
  ]
  for (const [mode, dest, exitCode, what] of endings) {
    it(`reach ${dest === 'file' ? 'a file stream' : 'the standard output'} when ${what}`, async () => {
      const { logged, code } = await runExit(mode, dest)
      assert.equal(code, exitCode)
      assert.equal(inOrder(logged, dest), 'arrived GET /last\ndone GET /last 200\n')
    })
  }

  it('reach a file stream opened with a start position at that position, after what it wrote, when the callback of res.end() calls process.exit()', async () => {
    const { logged, code } = await runExit('exit-in-finish', 'positioned')
    assert.equal(code, 0)
    assert.equal(inOrder(logged, 'file'), 'HEADER\narrived GET /last\ndone GET /last 200\n')
  })

  it('reach a stream of the app\'s own in its default encoding, as any other write, when the callback of res.end() calls process.exit()', async () => {
    const { logged, code } = await runExit('exit-in-finish', 'utf16le')
    assert.equal(code, 0)
    assert.equal(logged, 'arrived GET /last\ndone GET /last 200\n')
  })

  /**
   * Runs a fixture server that exits after its first request; one request to /x. Resolves with its
   * stderr and stdout once it exited with 0.
   */
  async function exitAfterRequest (fixture: string, env: Record<string, string>): Promise<{ stderr: string, stdout: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', `test/logger/fixtures/${fixture}`], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      const port = await portOf(child)
      await request(port, { path: '/x' }).catch(() => undefined)
      assert.equal(await exited, 0)
      // (what the pipes still held arrives by then)
      await new Promise((resolve) => setImmediate(resolve))
      return { stderr: stderrOf(child), stdout }
    } finally {
      child.kill()
    }
  }

  it('reach a file stream still opening, from two loggers, one with the buffer option: the file is opened once', async () => {
    const dir = tempDir()
    const file = join(dir, 'access.log')
    try {
      await exitAfterRequest('opening-file-exit.ts', { LOG_FILE: file })
      assert.equal(readFileSync(file, 'utf8'), 'A /x\nB /x\n')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reach a file stream made from a FileHandle, or given a copy of node\'s fs, when the callback of res.end() calls process.exit(): both write through node\'s own fs', async () => {
    const dir = tempDir()
    try {
      for (const kind of ['filehandle', 'spread']) {
        const file = join(dir, `access-${kind}.log`)
        await exitAfterRequest('node-fs-exit.ts', { LOG_FILE: file, KIND: kind })
        assert.equal(inOrder(readFileSync(file, 'utf8'), 'file'), 'arrived GET /x\ndone GET /x 200\n', kind)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reach a file stream made with an fs of its own through that fs, as morgan\'s do, never node\'s descriptor of the same number or a real file at its path', async () => {
    const dir = tempDir()
    try {
      const found: Record<string, unknown> = {}
      for (const opening of ['0', '1']) {
        const file = join(dir, `access-${opening}.log`)
        const other = join(dir, `other-${opening}.txt`)
        const { stdout } = await exitAfterRequest('custom-fs-exit.ts', { LOG_FILE: file, OTHER_FILE: other, OPENING: opening })
        found[opening] = { memory: JSON.parse(stdout), other: readFileSync(other, 'utf8'), made: readdirSync(dir).includes(`access-${opening}.log`) }
      }
      // (a stream still opening holds the line, as it holds morgan's: it never reaches the fs)
      assert.deepEqual(found, {
        0: { memory: ['GET /x 200\n'], other: '', made: false },
        1: { memory: [], other: '', made: false }
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reach a file stream whose open waits behind other work of node\'s thread pool, with the flag \'a\'; with \'w\' the stream\'s own open, carried out as the process ends, empties the file (README)', async () => {
    const dir = tempDir()
    try {
      const found: Record<string, string> = {}
      for (const flags of ['a', 'w']) {
        const file = join(dir, `${flags}.log`)
        const { stderr } = await exitAfterRequest('busy-pool-exit.ts', { LOG_FILE: file, FLAGS: flags, UV_THREADPOOL_SIZE: '1' })
        // the case this is about: the stream had not opened its file when the process exited
        assert.match(stderr, /pending true/)
        found[flags] = readFileSync(file, 'utf8')
      }
      assert.deepEqual(found, { a: 'GET /x 200\n', w: '' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reach a stream written line by line even when its write() throws for one of them: that line is counted in dropped, and the lines after it are written (a list of lines for a stream decoding base64 is counted whole)', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/throwing-write-exit.ts'])
    // /r1 was being written when the process exited; /r2 to /r4 waited for the 'drain'
    assert.deepEqual(JSON.parse(stdout), { got: ['/r1\n', '/r3\n', '/r4\n'], dropped: 1 })
    // lines waiting as a list, for a stream decoding them as base64: the list is counted
    const listed = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/throwing-write-exit.ts'], { env: { ...process.env, MODE: 'base64' } })
    const { got, dropped } = JSON.parse(listed.stdout) as { got: string[], dropped: number }
    assert.deepEqual([got.length, dropped], [1, 3])
  })

  /**
   * Fills a FIFO to capacity, reads one page of it (room for 4096 bytes) and writes `refill` bytes
   * back, then lets `write` write to it; returns what the pipe holds after what filled it.
   */
  function throughFullPipe (refill: number, write: (writer: number) => void): string {
    const dir = tempDir()
    const path = join(dir, 'fifo')
    execFileSync('mkfifo', [path])
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
    try {
      const page = Buffer.alloc(4096, 'x')
      let filled = 0
      for (;;) {
        try { filled += writeSync(writer, page) } catch { break }
      }
      readSync(reader, Buffer.alloc(4096), 0, 4096, null)
      if (refill > 0) filled += writeSync(writer, Buffer.alloc(refill, 'y'))
      write(writer)
      const rest = Buffer.alloc(filled + 8192)
      let got = 0
      for (;;) {
        try {
          const n = readSync(reader, rest, got, rest.length - got, null)
          if (n === 0) break
          got += n
        } catch { break }
      }
      return rest.subarray(filled - 4096, got).toString()
    } finally {
      closeSync(reader)
      closeSync(writer)
      rmSync(dir, { recursive: true, force: true })
    }
  }

  it('reach a full pipe as whole lines only, when it takes some but not all', () => {
    // Room for 4096 bytes and no more: lines of 100 bytes do not fill it exactly; the write gives
    // up (EAGAIN) after whole lines.
    const line = 'L'.repeat(99) + '\n'
    const after = throughFullPipe(0, (writer) => {
      assert.throws(() => { writeAllSync(writer, Buffer.from(line.repeat(100))) }, { code: 'EAGAIN' })
    })
    assert.equal(after, line.repeat(40))
  })

  it('reach a full pipe with as many whole lines as it has room for, when that is less than a piece: the piece is cut short at a line end, and how much went out is told', () => {
    // 3,096 bytes written back: 1,000 bytes of room, in the page begun. A piece of 40 lines of 100
    // bytes does not fit, 10 of them do.
    const line = 'L'.repeat(99) + '\n'
    const after = throughFullPipe(3096, (writer) => {
      assert.throws(() => { writeAllSync(writer, Buffer.from(line.repeat(100))) }, (err: unknown) => err instanceof PartlyWritten && err.code === 'EAGAIN' && err.written === 1000)
    })
    assert.equal(after, line.repeat(10))
  })

  /**
   * Runs the pipe-exit fixture with its standard output on a FIFO the test reads by itself,
   * without node's stream reading ahead: it is left full while `steps` make requests, then
   * emptied once the app waits to exit, so what is written at exit fits in it (it holds 64 KiB;
   * the lines are 1 kB each). Resolves with the lines of the whole output.
   */
  async function exitOnPipe (env: Record<string, string>, steps: (port: number) => Promise<void>, emptiedFirst = true, stderr?: (read: () => string) => void): Promise<string[]> {
    const dir = tempDir()
    const path = join(dir, 'fifo')
    execFileSync('mkfifo', [path])
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/pipe-exit-server.ts'], { stdio: ['pipe', writer, 'pipe'], env: { ...process.env, ...env } })
    closeSync(writer)
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    const chunks: Buffer[] = []
    const drain = (): void => {
      const buffer = Buffer.alloc(65536)
      for (;;) {
        let n = 0
        try { n = readSync(reader, buffer, 0, buffer.length, null) } catch { return }
        if (n === 0) return
        chunks.push(Buffer.from(buffer.subarray(0, n)))
      }
    }
    try {
      const port = await portOf(child)
      await steps(port)
      request(port, { path: '/exit' }).catch(() => { /* the app exits instead of answering */ })
      await waitFor(() => stderrOf(child).includes('exiting'), 10_000)
      if (emptiedFirst) drain()
      child.stdin?.end('x')
      assert.equal(await exited, 0)
      drain()
      stderr?.(() => stderrOf(child))
      const lines = Buffer.concat(chunks).toString().split('\n')
      // (a pipe left full may end with the part of a line it took before the exit, and no room
      // for the rest: the caller gets it as the last element)
      if (emptiedFirst) assert.equal(lines.pop(), '', 'the output ends with a whole line')
      return lines
    } finally {
      child.kill()
      closeSync(reader)
      rmSync(dir, { recursive: true, force: true })
    }
  }

  const pad = 'p'.repeat(1000)
  const logged = (paths: string[]): string[] => paths.map((path) => `GET ${path} ${pad}`)
  const range = (count: number, prefix = '/'): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`)
  async function getAll (port: number, paths: string[], together = false): Promise<void> {
    if (together) await Promise.all(paths.map(async (path) => await request(port, { path, headers: { 'x-pad': pad } })))
    else for (const path of paths) await request(port, { path, headers: { 'x-pad': pad } })
  }
  /** Requests held by the fixture and answered in one turn: their lines make one batch. */
  async function oneBatch (port: number, paths: string[]): Promise<void> {
    const answered = getAll(port, paths, true)
    while ((await request(port, { path: '/held' })).body !== String(paths.length)) await settle(5)
    await request(port, { path: '/release' })
    await answered
  }

  it('count the lines a pipe still full at exit does not take in dropped, which an exit listener of the app reads; those it took are whole', async () => {
    // (the pipe holds 64 KiB, the 100 lines 100 kB: it is not emptied before the app exits)
    let stderr = (): string => ''
    const lines = await exitOnPipe({}, async (port) => { await getAll(port, range(100)) }, false, (read) => { stderr = read })
    await waitFor(() => /dropped \d+/.test(stderr()))
    const dropped = Number(/dropped (\d+)/.exec(stderr())?.[1])
    assert.ok(dropped > 0, stderr())
    // the part of a line a write taken only in part left in the pipe, whose newline never went
    // out: that line is one of those counted
    const partial = lines.pop() as string
    const whole = logged(range(100 - dropped))
    assert.deepEqual(lines, whole)
    assert.ok(logged(range(100))[whole.length]?.startsWith(partial), partial)
  })

  describe('reach the standard output as a pipe whole, once each and in order, when the app exits while a write is only partly taken by it', () => {
    it('a batch, with lines held behind it: the rest of the batch, then those lines', async () => {
      const lines = await exitOnPipe({}, async (port) => { await getAll(port, range(100)) })
      assert.deepEqual(lines, logged(range(100)))
    })

    it('a batch with nothing behind it: the rest of the batch', async () => {
      const paths = range(100, '/hold/')
      const lines = await exitOnPipe({}, async (port) => { await oneBatch(port, paths); await settle(50) })
      assert.deepEqual(lines.sort(), logged(paths).sort())
    })

    it('a batch, with the `buffer` option holding a line: the rest of the batch, then that line, each once', async () => {
      const paths = range(100, '/hold/')
      const lines = await exitOnPipe({ BUFFER: '50' }, async (port) => {
        await oneBatch(port, paths)
        // the buffer hands the batch over, then holds the next line
        await settle(150)
        await getAll(port, ['/last'])
      })
      assert.deepEqual(lines.slice(0, -1).sort(), logged(paths).sort())
      assert.deepEqual(lines.slice(-1), logged(['/last']))
    })

    it('a write of the app\'s own: after the part the pipe took, a newline, so the batch and the lines held start on a line of their own', async () => {
      const lines = await exitOnPipe({}, async (port) => {
        await request(port, { path: '/own?bytes=70000' })
        await getAll(port, range(40))
      })
      assert.match(lines.shift() ?? '', /^A+$/)
      assert.deepEqual(lines, logged(range(40)))
    })

    it('a write of the app\'s own as long as the batch waiting behind it: the batch is written once, whole', async () => {
      const lines = await exitOnPipe({}, async (port) => {
        await request(port, { path: '/own?bytes=65536' })
        // `GET /x1 <pad>` and its newline: 1,009 bytes
        await request(port, { path: '/own?bytes=1009' })
        await getAll(port, ['/x1'])
        await settle(30)
      })
      assert.deepEqual(lines.filter((line) => !/^A+$/.test(line)), logged(['/x1']))
    })

    it('a write of the app\'s own that the pipe took nothing of, after one that filled it: no newline, nothing was cut', async () => {
      const lines = await exitOnPipe({}, async (port) => {
        await request(port, { path: '/own?bytes=65536' })
        await request(port, { path: '/own?bytes=16' })
        await getAll(port, ['/x1'])
        await settle(30)
        await getAll(port, ['/x2'])
      })
      // the second line of the app's own is lost if the pipe took nothing of it (node never writes it)
      assert.deepEqual(lines.filter((line) => !/^A+$/.test(line)), logged(['/x1', '/x2']))
    })
  })

  // HTTP/2 compatibility responses are waited for through on-finished: the callback of their end()
  // runs before their 'finish', and morgan loses the line there.
  const http2Endings: Array<[string, 'file' | 'stdout', number, string]> = [
    ['exit', 'file', 0, 'the app calls process.exit() right after logging'],
    ['exit-in-finish', 'file', 0, 'the callback of res.end() calls process.exit()'],
    ['exit-in-finish', 'stdout', 0, 'the callback of res.end() calls process.exit()'],
    ['throw-in-finish', 'file', 1, 'a \'finish\' listener throws and the uncaught exception ends the process']
  ]
  for (const [mode, dest, exitCode, what] of http2Endings) {
    it(`reach ${dest === 'file' ? 'a file stream' : 'the standard output'} over HTTP/2 when ${what}`, async () => {
      const { logged, code } = await runExit(mode, dest, 'http2')
      assert.equal(code, exitCode)
      assert.equal(inOrder(logged, dest), 'arrived GET /last\ndone GET /last 200\n')
    })
  }

  // morgan writes no line for these either: the response's 'finish' never comes
  for (const protocol of ['http', 'http2', 'https'] as const) {
    it(`leave out, at exit, the line of a response still sending its body${protocol === 'http' ? '' : ` over ${protocol === 'http2' ? 'HTTP/2' : 'HTTPS'}`}`, async () => {
      const { logged, code } = await runExit('exit-while-sending', 'file', protocol)
      assert.equal(code, 0)
      assert.equal(logged, 'arrived GET /last\n')
    })
  }

  // A TLS socket calls back a write a turn after it went out.
  const tlsEndings: Array<[string, string]> = [['exit-after-end', 'the app calls process.exit()'], ['end-stream-after-end', 'the app ends its log stream, and exits once it has ended,']]
  for (const [mode, what] of tlsEndings) {
    it(`reach a file stream over HTTPS when ${what} right after res.end()`, async () => {
      const { logged, code } = await runExit(mode, 'file', 'https')
      assert.equal(code, 0)
      assert.equal(inOrder(logged, 'file'), 'arrived GET /last\ndone GET /last 200\n')
    })
  }

  it('leave out, when the app ends its log stream and exits, the line of a response still sending its body', async () => {
    const { logged, code } = await runExit('end-stream-while-sending', 'file')
    assert.equal(code, 0)
    assert.equal(logged, 'arrived GET /last\n')
  })
})
