// The processes of a benchmark: servers and the load generator, each a node child process with
// an IPC channel, pinned to a CPU of its own when the machine allows (servers on CPU 0, the load
// generator on CPU 1). Shared by run.mjs and memory.mjs.
import { spawn, spawnSync } from 'node:child_process'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** Whether servers and load generator can each have a CPU: a second CPU, and taskset. */
export function canPin () {
  if (os.availableParallelism() < 2) return false
  return spawnSync('taskset', ['-c', '1', 'true'], { stdio: 'ignore' }).status === 0
}

const children = new Set()

/** Kills every child process still running. */
export function killChildren () {
  for (const child of children) child.kill('SIGKILL')
}

/** A node child process with IPC, pinned to `cpu` when the machine allows. */
export function spawnNode (config, cpu, args, env = {}) {
  const nodeArgs = [process.execPath, ...args]
  const [command, ...argv] = config.pinned ? ['taskset', '-c', String(cpu), ...nodeArgs] : nodeArgs
  const child = spawn(command, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...env } })
  children.add(child)
  const waiting = new Set()
  let exited = null
  child.on('message', message => {
    for (const w of waiting) {
      if (w.match(message)) {
        waiting.delete(w)
        w.resolve(message)
        return
      }
    }
  })
  child.on('exit', (code, signal) => {
    children.delete(child)
    exited = `exited (${signal ?? code})`
    for (const w of waiting) w.reject(new Error(`process ${exited}`))
    waiting.clear()
  })
  return {
    child,
    /** Sends `message` (if any) and resolves with the first message for which `match` holds. */
    ask (message, match, timeoutMs = 30000) {
      if (exited) return Promise.reject(new Error(`process ${exited}`))
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(w)
          reject(new Error(`no answer within ${timeoutMs} ms`))
        }, timeoutMs)
        const w = {
          match,
          resolve: m => { clearTimeout(timer); resolve(m) },
          reject: e => { clearTimeout(timer); reject(e) }
        }
        waiting.add(w)
        if (message) child.send(message)
      })
    },
    stop () {
      if (exited) return Promise.resolve()
      return new Promise(resolve => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
        child.once('exit', () => { clearTimeout(timer); resolve() })
        child.send({ type: 'exit' }, err => { if (err) child.kill() })
      })
    }
  }
}

export class LoadGeneratorError extends Error {}

export async function startLoadGenerator (config) {
  const load = spawnNode(config, 1, [join(here, 'load.mjs')])
  await load.ask(null, m => m.ready)
  let next = 0
  return {
    stop: () => load.stop(),
    async run (c, port, duration) {
      const id = ++next
      const job = { id, caseName: c.name, port, connections: config.connections, rate: config.rate, duration }
      try {
        const reply = await load.ask(job, m => m.id === id, (duration + 30) * 1000)
        if (reply.error) throw new Error(reply.error)
        return reply.result
      } catch (err) {
        // not the variant's fault: the whole run stops
        throw new LoadGeneratorError(`load generator: ${err.message}`)
      }
    }
  }
}

// Any status but 2xx, or a connection error, means the variant is broken for this request.
export function loadProblem (result, server) {
  if (result.non2xx === 0 && result.errors === 0 && result.timeouts === 0) return null
  const codes = Object.entries(result.statusCodes).map(([code, n]) => `${n}×${code}`).join(', ')
  return `${result.non2xx} non-2xx responses (${codes}), ${result.errors} errors, ${result.timeouts} timeouts` +
    (server?.lastError ? `; server says: ${server.lastError}` : '')
}

export async function startServer (config, c, variant, tmpDir) {
  const args = []
  if (process.env.BENCH_CPU_PROF) args.push('--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_CPU_PROF)}`)
  args.push('--expose-gc', join(here, 'server.mjs'), c.name, variant)
  const server = spawnNode(config, 0, args, { BENCH_TMP: tmpDir })
  const ready = await server.ask(null, m => m.type === 'ready' || m.type === 'fatal')
  if (ready.type === 'fatal') {
    await server.stop()
    throw new Error(ready.message)
  }
  return { ...server, port: ready.port }
}
