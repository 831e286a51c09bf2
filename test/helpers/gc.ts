// A full garbage collection on demand, so memory assertions measure what is retained, not
// garbage waiting to be collected. Works without --expose-gc on the command line.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose-gc')
export const gc = runInNewContext('gc') as () => void
