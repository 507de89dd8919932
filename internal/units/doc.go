// Package units writes quantities as people read them — bytes in binary
// units, counts with thousands separators, microseconds as µs, ms or s,
// percentages — the same way in text, HTML and every command's messages.
package units
