// Loads a copy of a source module: in a realm of its own (a vm context with its own globalThis),
// as Jest loads the modules of each test file, or in this realm, as a second installed copy or a
// hot reload that cleared require's cache loads it. Only foyer's own files are copied: node's
// modules and the dependencies come from the host, as Jest gives node's own modules.
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { compileFunction, createContext } from 'node:vm'
import ts from 'typescript'

const hostRequire = require

const compiledFiles = new Map<string, string>()

/** The file's TypeScript compiled to CommonJS, once for every realm. */
function compiled (file: string): string {
  let text = compiledFiles.get(file)
  if (text === undefined) {
    text = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true }
    }).outputText
    compiledFiles.set(file, text)
  }
  return text
}

type ModuleFunction = (exports: object, require: (id: string) => unknown, module: { exports: object }, filename: string, dirname: string) => void

/**
 * The exports of a new copy of the source file at `path` (relative to the project), loaded in a
 * new realm, or in this one when `ownRealm` is false. `globals` replace the new realm's (Jest
 * gives each test file a `process` of its own, whose `nextTick` its fake timers replace).
 */
export function loadCopy (path: string, ownRealm = true, globals: Record<string, unknown> = {}): Record<string, unknown> {
  const context = ownRealm
    ? createContext({ process, Buffer, console, URL, TextEncoder, TextDecoder, queueMicrotask, setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate, ...globals })
    : undefined
  const cache = new Map<string, { exports: object }>()
  const load = (file: string): object => {
    const cached = cache.get(file)
    if (cached !== undefined) return cached.exports
    const module = { exports: {} }
    cache.set(file, module)
    const outputText = compiled(file)
    const params = ['exports', 'require', 'module', '__filename', '__dirname']
    const run = (context === undefined ? compileFunction(outputText, params, { filename: file }) : compileFunction(outputText, params, { parsingContext: context, filename: file })) as ModuleFunction
    const requireHere = (id: string): unknown => id.startsWith('.') ? load(resolve(dirname(file), id.replace(/\.js$/, '.ts'))) : hostRequire(id)
    run(module.exports, requireHere, module, file, dirname(file))
    return module.exports
  }
  return load(resolve(path)) as Record<string, unknown>
}
