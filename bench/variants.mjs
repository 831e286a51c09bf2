// How each variant serves a case. Every variant ends in the same `answer` (a fixed 200 'ok'),
// so the only difference between two servers of a case is the middleware under test.
import { createWriteStream } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { createGunzip } from 'node:zlib'
import { baselineDir, formatOf } from './cases.mjs'

const require = createRequire(import.meta.url)

// foyer is loaded through its own published entry points (the built dist/), the way a user
// switching from morgan / body-parser would load it.
// A `baseline` variant loads the same entry from its build in BENCH_BASELINE.
function loadFoyer (entry, variant = 'foyer') {
  const dir = baselineDir(variant)
  try {
    if (dir !== undefined) return require(resolve(dir, 'entries', `${entry}.js`))
    return require(`foyer/${entry}`)
  } catch (err) {
    // a build loads its dependencies from the node_modules folders above it
    const hint = dir === undefined
      ? 'run `npm run build` first'
      : 'a copy of a build must be inside this repository (bench/results/tmp/, say), or in a checkout with its dependencies installed'
    throw new Error(`cannot load foyer/${entry} from ${dir ?? 'this repository'} (${err.message}); ${hint}`)
  }
}

/** The plain node:http server of a variant: `handle(req, res)` serves one request. */
function nodeServer (handle) {
  return {
    async listen () {
      const server = createServer(handle)
      await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
      return server
    }
  }
}

/** A connect-style middleware in front of the common answer, errors to the common failure. */
function withMiddleware (middleware, ctx) {
  return nodeServer((req, res) => {
    middleware(req, res, err => {
      if (err) ctx.fail(req, res, err)
      else ctx.answer(req, res, req.body)
    })
  })
}

// The floor: read the chunks, concatenate, decode, parse. No type, length or charset checks.
const BARE_DECODE = {
  json: buf => JSON.parse(buf.toString()),
  urlencoded: buf => Object.fromEntries(new URLSearchParams(buf.toString())),
  text: buf => buf.toString(),
  raw: buf => buf
}

function bareBody (c, ctx) {
  const decode = BARE_DECODE[c.parser]
  const gzip = c.encoding === 'gzip'
  if (c.encoding && !gzip) throw new Error(`the floor does not decode ${c.encoding}`)
  return nodeServer((req, res) => {
    const source = gzip ? req.pipe(createGunzip()) : req
    const chunks = []
    source.on('data', chunk => chunks.push(chunk))
    source.on('end', () => ctx.answer(req, res, decode(Buffer.concat(chunks))))
  })
}

function fastifyBody (c, ctx) {
  if (c.parser !== 'json' || c.encoding) throw new Error('fastify only takes part in plain json cases')
  const fastify = require('fastify')
  return {
    async listen () {
      const app = fastify({ logger: false })
      const handler = (request, reply) => {
        const { status, text } = ctx.reply(request.url, request.body)
        reply.code(status).header('content-type', 'text/plain').send(text)
      }
      app.post('/', handler)
      app.post('/check', handler)
      await app.listen({ port: 0, host: '127.0.0.1' })
      return app.server
    }
  }
}

function bodyVariant (c, variant, ctx) {
  if (baselineDir(variant) !== undefined) return withMiddleware(loadFoyer('body', variant)[c.parser](c.options), ctx)
  switch (variant) {
    case 'bare': return bareBody(c, ctx)
    case 'fastify': return fastifyBody(c, ctx)
    case 'body-parser': return withMiddleware(require('body-parser')[c.parser](c.options), ctx)
    case 'foyer': return withMiddleware(loadFoyer('body', variant)[c.parser](c.options), ctx)
  }
  throw new Error(`unknown body variant ${variant}`)
}

// The `fixed-line` reference: what writing the log costs, without a logger. Per request the
// case's line (fixed text around the request's URL) is encoded into a buffer; every 10 ms the
// buffer goes to the file stream in one write, and the buffer comes back for reuse once written.
const FIXED_LINE_BUFFER = 320 * 1024

/** `add(text)` puts a line into the batch that goes to `stream` every 10 ms. */
function lineBatcher (stream) {
  let buffer = Buffer.allocUnsafeSlow(FIXED_LINE_BUFFER)
  let spare = null
  let used = 0
  let timer = null
  const flush = () => {
    clearTimeout(timer)
    timer = null
    if (used === 0) return
    const full = buffer
    stream.write(full.subarray(0, used), () => { spare = full })
    buffer = spare ?? Buffer.allocUnsafeSlow(FIXED_LINE_BUFFER)
    spare = null
    used = 0
  }
  return text => {
    if (used + 3 * text.length + 1 > FIXED_LINE_BUFFER) flush()
    used += buffer.write(text, used)
    buffer[used++] = 0x0a
    if (timer === null) timer = setTimeout(flush, 10)
  }
}

function fixedLineWriter (line, stream) {
  const add = lineBatcher(stream)
  return (req, res, next) => {
    add(line(req.url))
    next()
  }
}

// The `minimal` reference: the least a logger does, one 'finish' listener per response (a shared
// function, no closure) writing the case's line from the request and the response, batched as
// fixed-line batches. The request's start is kept only where the line shows a response time.
const MINIMAL_START = Symbol('minimal.start')

function minimalLogger (line, stream) {
  const add = lineBatcher(stream)
  const timed = line.length > 2
  function onFinish () {
    const req = this.req
    add(line(req, this, timed ? performance.now() - req[MINIMAL_START] : 0))
  }
  return (req, res, next) => {
    if (timed) req[MINIMAL_START] = performance.now()
    res.on('finish', onFinish)
    next()
  }
}

function loggerVariant (c, variant, ctx) {
  if (variant === 'none') return nodeServer((req, res) => ctx.answer(req, res))
  const logFile = join(ctx.tmpDir, `${c.name}-${variant}-${process.pid}.log`)
  ctx.logFile = logFile
  const format = formatOf(c, variant)
  if (baselineDir(variant) !== undefined) return withMiddleware(loadFoyer('logger', variant)(format, { stream: createWriteStream(logFile) }), ctx)
  switch (variant) {
    case 'fixed-line': return withMiddleware(fixedLineWriter(c.fixedLine, createWriteStream(logFile)), ctx)
    case 'minimal': return withMiddleware(minimalLogger(c.minimalLine, createWriteStream(logFile)), ctx)
    case 'morgan': return withMiddleware(require('morgan')(format, { stream: createWriteStream(logFile) }), ctx)
    case 'foyer': return withMiddleware(loadFoyer('logger', variant)(format, { stream: createWriteStream(logFile) }), ctx)
    case 'pino-http': {
      // pino-http has no format language: its default line, to a file destination.
      const pino = require('pino')
      return withMiddleware(require('pino-http')({}, pino.destination(logFile)), ctx)
    }
  }
  throw new Error(`unknown logger variant ${variant}`)
}

/**
 * Builds the server of one case and variant.
 * @param ctx {{ tmpDir: string, answer, fail, reply }} the common ends of every request;
 *   `ctx.logFile` is set for variants that log
 * @returns {{ listen(): Promise<import('node:http').Server> }}
 */
export function buildVariant (c, variant, ctx) {
  if (!c.variants.includes(variant)) throw new Error(`case ${c.name} has no variant ${variant}; it has ${c.variants.join(', ')}`)
  return c.group === 'body' ? bodyVariant(c, variant, ctx) : loggerVariant(c, variant, ctx)
}
