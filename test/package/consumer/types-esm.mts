// Type-level drop-in check for ESM consumers, including the public option types.
import logger from 'foyer/logger'
import { json, urlencoded } from 'foyer/body'
import { logger as named, readJson } from 'foyer'
import type { JsonOptions, LoggerOptions, UrlencodedOptions } from 'foyer'

const loggerOptions: LoggerOptions = { immediate: true }
const jsonOptions: JsonOptions = { limit: 1024, reviver: (_key, value: unknown) => value }
const formOptions: UrlencodedOptions = { extended: false }
const a = logger('dev', loggerOptions)
const b = named(':method :url')
const c = json(jsonOptions)
const d = urlencoded(formOptions)
const e: Promise<{ id: number } | undefined> = readJson<{ id: number }>(new Request('http://localhost/', { method: 'POST', body: '{}' }), { limit: 1024 })
export { a, b, c, d, e }
