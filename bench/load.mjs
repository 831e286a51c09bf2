// The load generator: autocannon's programmatic API in its own process, so run.mjs can pin it
// to the CPU the servers do not use. It runs one job per IPC message and answers with the
// numbers the report needs. It builds the request itself from the case table (a Buffer body
// does not survive the IPC channel's JSON).
import { createRequire } from 'node:module'
import { caseByName, requestOf } from './cases.mjs'

const autocannon = createRequire(import.meta.url)('autocannon')

if (typeof process.send !== 'function') {
  console.error('bench/load.mjs is started by bench/run.mjs')
  process.exit(2)
}

function summary (result) {
  return {
    duration: result.duration,
    completed: result.requests.total,
    reqPerSec: result.duration > 0 ? result.requests.total / result.duration : 0,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99
  }
}

process.on('message', ({ type, id, caseName, port, connections, rate, duration }) => {
  if (type === 'exit') process.exit(0)
  const { method, path, headers, body } = requestOf(caseByName(caseName))
  const options = { url: `http://127.0.0.1:${port}${path}`, method, headers, body, connections, duration }
  if (rate !== undefined) options.overallRate = rate
  autocannon(options, (err, result) => {
    if (err) process.send({ id, error: err.stack ?? String(err) })
    else process.send({ id, result: summary(result) })
  })
})
process.on('disconnect', () => process.exit(0))
process.send({ ready: true })
