//! Streamable HTTP over smoltcp on the board's Ethernet controller. (Being written.)
