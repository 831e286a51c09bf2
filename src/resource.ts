// The options every AsyncResource made here is given. Without options, node's AsyncResource
// constructor reads `triggerAsyncId` and `requireManualDestroy` from a frozen empty object, which
// optimized code cannot look up inline: two calls to V8's generic property lookup per resource.
// This object always has both properties; the values are the defaults (the trigger is the
// current execution context, the resource is destroyed when it is collected).
/** The options given to every AsyncResource made by foyer. */
export const RESOURCE_OPTIONS: Readonly<{ triggerAsyncId: undefined, requireManualDestroy: boolean }> =
  Object.freeze({ triggerAsyncId: undefined, requireManualDestroy: false })
