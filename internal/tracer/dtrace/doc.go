// Package dtrace records with DTrace running ioshape's D script
// (dscripts/ioshape.d): it starts the target command itself once the
// script's BEGIN has fired (SIP forbids dtrace -c on Apple's binaries),
// turns dtrace's output and its stderr notices into records for the
// session loop, and falls back to fs_usage for the block layer when System
// Integrity Protection hides the io provider.
package dtrace
