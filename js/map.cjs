// The block map's CommonJS entry (`require('kiln/map')`): the same API as
// map.mjs, which it imports on the first loadBlockMap() (asynchronous anyway).
'use strict';

function loadBlockMap() {
  return import('./map.mjs').then((m) => m.loadBlockMap());
}

module.exports = { loadBlockMap };
