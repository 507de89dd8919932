// Package published reads drive benchmark results as people publish them —
// CrystalDiskMark's copied text (versions 3 to 8, any profile, with or
// without the Mix tests), KDiskMark's text export, AmorphousDiskMark's
// copied text, an ATTO Disk Benchmark table (text or CSV) and fio's JSON
// output — into the figures a drive profile is built from
// (drive.Provenance). It reads text only: it runs nothing and opens
// nothing. A line it cannot read is an error naming the line and what was
// expected there.
package published
