// The page's own sizes and intervals, in one place (the package's are its
// instance's `policy`: js/lib/policy.mjs). No other file of the page writes
// a limit as a literal: js/test/policy.test.mjs fails on one.

// With the whole-file stream (the checkbox), the map reads at most this many
// first bytes again (the directory region of a block up to it: names and
// payload ranges; a bigger directory is drawn from its header alone). By
// random access the map is the validator's own (inspectBlob's `map`).
export const MAP_PREFIX_BYTES = 64 * 1024 * 1024;

// A file is read in chunks of this size, into one reused buffer.
export const READ_CHUNK_BYTES = 1024 * 1024;

// Progress is posted at most this often while a file is read.
export const PROGRESS_EVERY_MS = 100;

// Sizes are shown in binary units: "read 0.3 KiB of 10.0 GiB".
export const BYTES_PER_KIB = 1024;
