// `npm run bench:memory`: does a server's memory grow with the requests it answers?
//
// Each variant of a case is the server `npm run bench` measures (bench/server.mjs), loaded by
// autocannon for BENCH_WINDOWS windows of BENCH_DURATION seconds, one variant after the other.
// After each window the server runs a full garbage collection and reports its heap and RSS,
// then empties its log file. Whatever a server keeps per request shows as heap growing in
// proportion to the requests answered: a byte per request is about a megabyte per million.
// The first windows also grow while V8 compiles and optimizes the hot paths, so the growth is
// taken from the middle window to the last.
//
// Knobs (environment variables):
//   BENCH_CASE=combined-file  the case (see cases.mjs)
//   BENCH_VARIANTS=...        comma list of the case's variants (default: all of them)
//   BENCH_WINDOWS=12          windows per variant
//   BENCH_DURATION=5          seconds per window
//   BENCH_CONNECTIONS=10      autocannon connections
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { caseByName } from './cases.mjs'
import { listFromEnv, numberFromEnv } from './env.mjs'
import { canPin, killChildren, loadProblem, startLoadGenerator, startServer } from './processes.mjs'

const c = caseByName(process.env.BENCH_CASE || 'combined-file')
const variants = listFromEnv('BENCH_VARIANTS') ?? c.variants
const unknown = variants.filter(v => !c.variants.includes(v))
if (unknown.length > 0) throw new Error(`${c.name} has no variant ${unknown.join(', ')}; its variants: ${c.variants.join(', ')}`)
const windows = Math.max(2, Math.round(numberFromEnv('BENCH_WINDOWS', 12)))
const duration = numberFromEnv('BENCH_DURATION', 5)
const config = { pinned: canPin(), connections: Math.round(numberFromEnv('BENCH_CONNECTIONS', 10)), rate: undefined }

const kb = bytes => (bytes / 1024).toFixed(0)
const mb = bytes => (bytes / 1048576).toFixed(1)

/** The windows of one variant: requests answered so far, heap and RSS after them, log bytes. */
async function measureVariant (load, variant, tmpDir) {
  const server = await startServer(config, c, variant, tmpDir)
  const rows = []
  let requests = 0
  try {
    for (let i = 0; i < windows; i++) {
      await server.ask({ type: 'start' }, m => m.type === 'started')
      const result = await load.run(c, server.port, duration)
      const window = await server.ask({ type: 'stop' }, m => m.type === 'stopped')
      const problem = loadProblem(result, window)
      if (problem) throw new Error(`${variant}: ${problem}`)
      const { bytes } = await server.ask({ type: 'truncate' }, m => m.type === 'truncated')
      requests += window.answered
      rows.push({ requests, heapUsed: window.heapUsed, rss: window.rss, logBytes: bytes })
      console.log(`${variant.padEnd(10)} window ${i + 1}/${windows}  ${(requests / 1000).toFixed(0)} k requests  heap ${kb(window.heapUsed)} KB  RSS ${mb(window.rss)} MB`)
    }
  } finally {
    await server.stop()
  }
  return rows
}

function summary (variant, rows) {
  const middle = rows[Math.floor((rows.length - 1) / 2)]
  const last = rows[rows.length - 1]
  const perMillion = (last.heapUsed - middle.heapUsed) / ((last.requests - middle.requests) / 1e6)
  const logged = rows.reduce((n, r) => n + r.logBytes, 0)
  return `| ${variant} | ${(last.requests / 1000).toFixed(0)} | ${kb(rows[0].heapUsed)} | ${kb(middle.heapUsed)} | ${kb(last.heapUsed)} | ` +
    `${perMillion >= 0 ? '+' : ''}${kb(perMillion)} | ${mb(last.rss)} | ${c.group === 'logger' ? mb(logged) : '—'} |`
}

async function main () {
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ')
  console.log(`${c.name}: ${variants.join(', ')}; ${windows} windows of ${duration} s each, ${config.connections} connections` +
    (config.pinned ? '' : ' (no CPU pinning: taskset or a second CPU is missing)'))
  const tmpDir = mkdtempSync(join(os.tmpdir(), 'foyer-memory-'))
  process.once('SIGINT', () => { killChildren(); rmSync(tmpDir, { recursive: true, force: true }); process.exit(130) })
  const load = await startLoadGenerator(config)
  const lines = []
  try {
    for (const variant of variants) lines.push(summary(variant, await measureVariant(load, variant, tmpDir)))
  } finally {
    await load.stop()
    rmSync(tmpDir, { recursive: true, force: true })
  }
  console.log(`\n${os.cpus()[0]?.model ?? 'unknown CPU'}, Node.js ${process.version}, started ${started} UTC`)
  console.log('heap: after a full GC at the end of the window; growth: from the middle window to the last, per million requests\n')
  console.log('| variant | k requests | heap KB, window 1 | heap KB, middle | heap KB, last | heap growth KB per M requests | RSS MB, last | log MB written |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const line of lines) console.log(line)
}

main().catch(err => {
  console.error(err)
  killChildren()
  process.exit(1)
})
