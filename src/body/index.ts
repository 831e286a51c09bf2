import type { IncomingMessage, ServerResponse } from 'node:http'

export type BodyMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

export function json (options?: object): BodyMiddleware { void options; return (_req, _res, next) => { next() } }
export function raw (options?: object): BodyMiddleware { void options; return (_req, _res, next) => { next() } }
export function text (options?: object): BodyMiddleware { void options; return (_req, _res, next) => { next() } }
export function urlencoded (options?: object): BodyMiddleware { void options; return (_req, _res, next) => { next() } }

export interface BodyParser {
  (): never
  json: typeof json
  raw: typeof raw
  text: typeof text
  urlencoded: typeof urlencoded
}

function removedGeneric (): never {
  throw new Error('The bodyParser() generic has been split into individual middleware to use instead.')
}

export const bodyParser: BodyParser = Object.assign(removedGeneric, { json, raw, text, urlencoded })
