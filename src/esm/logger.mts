// ESM entry of `foyer/logger`: the same function object `require('foyer/logger')` returns.
import logger from '../entries/logger.js'

export default logger
