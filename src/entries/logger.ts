// CommonJS entry of `foyer/logger`: `require('foyer/logger')` is the logger function itself,
// exactly like `require('morgan')`.
import { logger } from '../logger/index.js'

export = logger
