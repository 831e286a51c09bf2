// One benchmark server: `node bench/server.mjs <case> <variant>`.
//
// Started by run.mjs (pinned to one CPU, with an IPC channel) it measures itself: between the
// 'start' and 'stop' messages it counts the requests it answers and takes its own CPU time
// (process.cpuUsage: user + system), then reports both with its memory. A window measured in
// slices ('start' with `paused`, then 'resume' / 'pause' around each slice) counts the CPU time
// of its slices only. Started by memory.mjs, it also empties its log file on 'truncate'.
//
// Started by hand (no IPC) it prints its URL and serves until Ctrl-C, e.g. to profile:
//   node --cpu-prof bench/server.mjs json-small foyer
//   npx autocannon -c 10 -d 10 -m POST -H content-type=application/json -b '{"a":1}' http://127.0.0.1:PORT/
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { caseByName, checkBody } from './cases.mjs'
import { buildVariant } from './variants.mjs'

const [caseName, variant] = process.argv.slice(2)
if (!caseName || !variant) {
  console.error('usage: node bench/server.mjs <case> <variant>')
  process.exit(2)
}

const managed = typeof process.send === 'function'
const send = message => process.send?.(message)
const c = caseByName(caseName)

// The window counters: requests answered 2xx, requests failed by the middleware.
let answered = 0
let failed = 0
let lastError = null

const OK = { status: 200, text: 'ok' }
const OK_HEADERS = { 'content-type': 'text/plain', 'content-length': '2' }

function reply (url, body) {
  answered++
  // The start-up check: one request to /check before any load, answered with what was parsed.
  if (url === '/check' && c.group === 'body') {
    const problem = checkBody(c, variant, body)
    return problem ? { status: 500, text: `check failed: ${problem}` } : { status: 200, text: 'check ok' }
  }
  return OK
}

let tmpDir = process.env.BENCH_TMP
const ownTmpDir = !tmpDir
if (ownTmpDir) tmpDir = mkdtempSync(join(tmpdir(), 'foyer-bench-'))

const ctx = {
  tmpDir,
  logFile: null,
  reply,
  answer (req, res, body) {
    const { status, text } = reply(req.url, body)
    if (status === 200 && text === 'ok') res.writeHead(200, OK_HEADERS)
    else res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  },
  fail (req, res, err) {
    // Mostly requests autocannon cut off when its window closed; a real failure shows as
    // non-2xx in the load generator, which fails the run.
    failed++
    lastError = `${err.status ?? 500} ${err.type ?? ''} ${err.message}`.replace(/ +/g, ' ')
    if (res.headersSent) {
      res.destroy()
      return
    }
    const text = `error: ${lastError}`
    res.writeHead(err.status ?? 500, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  }
}

function cleanUp () {
  if (ownTmpDir) rmSync(tmpDir, { recursive: true, force: true })
  else if (ctx.logFile) rmSync(ctx.logFile, { force: true })
}

// A logger variant passes its check when the line of the check request reaches its file.
async function checkLog (marker) {
  if (!ctx.logFile) return null
  const deadline = Date.now() + 3000
  while (Date.now() < deadline) {
    let text = ''
    try { text = readFileSync(ctx.logFile, 'utf8') } catch {}
    if (text.includes(marker)) return null
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return 'no log line for the check request reached the log file within 3 s'
}

let startHeap = 0
// CPU time and preemptions of the window: the sum over its slices, each from 'resume' (or
// 'start') to 'pause' (or 'stop'). Between slices the load goes to the other variants and this
// process waits; its idle time is not counted.
let cpuUs = 0
let preempted = 0
let sliceCpu = null
let sliceSwitches = 0

function resume () {
  sliceSwitches = process.resourceUsage().involuntaryContextSwitches
  sliceCpu = process.cpuUsage()
}

function pause () {
  if (sliceCpu === null) return
  const cpu = process.cpuUsage(sliceCpu)
  cpuUs += cpu.user + cpu.system
  // being preempted (another process on this CPU) makes each request dearer: a noisy window
  preempted += process.resourceUsage().involuntaryContextSwitches - sliceSwitches
  sliceCpu = null
}

function onMessage (message) {
  switch (message.type) {
    case 'start':
      answered = 0
      failed = 0
      lastError = null
      cpuUs = 0
      preempted = 0
      // what the server holds before the window, after a full collection: the window's growth is
      // measured against it
      global.gc?.()
      startHeap = process.memoryUsage().heapUsed
      // a window measured in slices starts paused: its first 'resume' starts the clock
      if (message.paused) sliceCpu = null
      else resume()
      send({ type: 'started' })
      break
    case 'resume':
      resume()
      send({ type: 'resumed' })
      break
    case 'pause':
      pause()
      send({ type: 'paused' })
      break
    case 'stop': {
      pause()
      const window = { answered, failed, lastError, cpuUs, preempted }
      // Memory after a full collection: what the server still holds, not garbage not yet swept.
      global.gc?.()
      const mem = process.memoryUsage()
      send({ type: 'stopped', ...window, rss: mem.rss, heapUsed: mem.heapUsed, heapGrowth: mem.heapUsed - startHeap, maxRss: process.resourceUsage().maxRSS * 1024 })
      break
    }
    case 'truncate': {
      // memory.mjs, between windows: the log file emptied, so a long run does not fill the disk.
      // What it held tells that the logger did write. A stream opened without O_APPEND goes on
      // writing at its old offset, so after the first truncation the file's size counts every
      // window so far, the holes included: its allocated blocks count what this window wrote.
      let bytes = 0
      if (ctx.logFile) {
        try {
          const { size, blocks } = statSync(ctx.logFile)
          bytes = blocks > 0 ? Math.min(size, blocks * 512) : size
        } catch {}
        if (bytes > 0) truncateSync(ctx.logFile, 0)
      }
      send({ type: 'truncated', bytes })
      break
    }
    case 'logcheck':
      checkLog(message.marker).then(problem => send({ type: 'logchecked', problem }))
      break
    case 'exit':
      process.exit(0)
  }
}

process.on('exit', cleanUp)
process.on('SIGINT', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))

try {
  const server = await buildVariant(c, variant, ctx).listen()
  const { port } = server.address()
  if (managed) {
    process.on('message', onMessage)
    process.on('disconnect', () => process.exit(0))
    send({ type: 'ready', port })
  } else {
    console.log(`${c.name} / ${variant} listening on http://127.0.0.1:${port}/`)
  }
} catch (err) {
  if (managed) send({ type: 'fatal', message: err.stack ?? String(err) })
  else console.error(err)
  process.exit(1)
}
