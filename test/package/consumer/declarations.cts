// A library that exports middleware made with foyer and emits declarations for it: TypeScript
// must be able to name their types from the package's own entry points.
import logger = require('foyer/logger')
import bodyParser = require('foyer/body')

export const requestLogger = logger('combined')
export const jsonParser = bodyParser.json({ limit: '1mb' })
export const formats = { line: logger.compile(':method :url'), json: logger.json({ status: ':status' }) }
