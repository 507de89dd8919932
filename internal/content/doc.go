// Package content judges how far data would compress: some drives' speed
// depends on what is written, not only on its shape. zram compresses every
// page it stores (a tar of C headers went onto it at 399 MB/s, random bytes
// at 1.6 GB/s, 128 KiB direct writes), and an SSD controller or a file
// system may compress as well. The recorder samples the data a workload's
// calls moved; bench writes text-like and random data to price it.
package content
