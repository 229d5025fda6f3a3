//! The reference every small-checksum measurement prints beside `net::csum_partial`: the
//! Internet checksum (RFC 1071) as a kernel without a vector path computes it (Linux's generic
//! `do_csum` shape, 64-bit). The report's small-call checksums and `benches/small.rs` both time
//! this one loop, so their ratios compare the same thing.

/// The Internet checksum of `data` the way a kernel without a vector path computes it: 8-byte
/// little-endian words with end-around carry, the tail as a partial word, folded to 32 bits
/// (fold to 16 bits and swap the bytes for the big-endian checksum). Never inlined, so a
/// measurement times a real call, as it does the library's.
#[inline(never)]
pub fn kernel_loop(data: &[u8]) -> u32 {
    let add = |a: u64, b: u64| {
        let (s, c) = a.overflowing_add(b);
        s + u64::from(c)
    };
    let mut sum = 0u64;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        sum = add(sum, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut tail = 0u64;
    for (i, &b) in words.remainder().iter().enumerate() {
        tail |= u64::from(b) << (8 * i);
    }
    sum = add(sum, tail);
    let s = (sum >> 32) + (sum & 0xffff_ffff);
    ((s >> 32) + (s & 0xffff_ffff)) as u32
}
