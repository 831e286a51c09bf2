import type { IncomingMessage, ServerResponse } from 'node:http'

export type FormatFn = (tokens: unknown, req: IncomingMessage, res: ServerResponse) => string | null | undefined

export interface Logger {
  (format: string | FormatFn, options?: object): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void
  compile: (format: string) => FormatFn
}

function create (format: string | FormatFn, options?: object): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  void format; void options
  return (_req, _res, next) => { next() }
}

export const logger: Logger = Object.assign(create, {
  compile (format: string): FormatFn { return () => format }
})
