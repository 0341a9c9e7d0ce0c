//! Flash footprint baseline: the same runtime, exit and panic handler as `footprint-*`,
//! without mrtr. The difference is what mrtr-core and a backend add.

#![no_std]
#![no_main]

gateway_firmware::footprint!();
