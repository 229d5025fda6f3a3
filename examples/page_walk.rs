//! A page walk: a zero-copy send's frags built from a buffer in huge pages, one compound-page
//! lookup per huge page instead of one per 4 KiB page, then the bytes the frags describe
//! gathered into one place.
//!
//! `cargo run --release --example page_walk`
//!
//! A network stack that sends a user's buffer without copying it pins the buffer's pages and
//! describes the bytes as frags: (head page, offset, length) triples. Finding each page's head
//! (`compound_head()` in Linux) touches a cold line of page metadata per 4 KiB page; the frag
//! builder keeps the current head and asks again only when a page falls outside it.

use cachecopy::iter::{copy_from_iter, IoVec, Source};
use cachecopy::page::{AlignedBlocks, FragBuilder, Frags};
use cachecopy::policy::Temporal;

const HUGE: usize = 2 << 20;

fn main() {
    // A 6 MiB arena standing for memory in 2 MiB huge pages (an allocator's huge-page arena,
    // hugetlbfs): the lookup treats every naturally aligned 2 MiB block as one compound page.
    let arena = vec![0u8; 6 << 20];
    let base = arena.as_ptr() as usize;
    let start = base.next_multiple_of(HUGE) - base; // the first aligned block in it
    let msg = &arena[start + 100..start + 100 + (3 << 20)]; // 3 MiB: over two huge pages

    let lookup = AlignedBlocks::of_size(HUGE).expect("a power of two");
    let mut builder = FragBuilder::new(lookup);
    let mut frags: Frags = Frags::new(); // up to 17, as one socket buffer holds
    let mut src = Source::ubuf(msg);
    let mut refs = Vec::new();
    let built = builder
        .build(&mut src, usize::MAX, &mut frags, |head, pages| {
            refs.push((head, pages))
        })
        .expect("aligned blocks always answer");

    // Two frags (one per huge page the bytes touch), two lookups, two batches of references.
    assert_eq!(built, msg.len());
    assert_eq!(src.count(), 0);
    assert_eq!(frags.len(), 2);
    assert_eq!(frags.bytes(), msg.len());
    assert_eq!(builder.stats().lookups, 2);
    let pages = msg.len().div_ceil(cachecopy::page::page_size()) + 1;
    assert_eq!(refs.iter().map(|&(_, n)| n).sum::<usize>(), pages);
    for f in frags.iter() {
        println!(
            "frag: head {:#x} + {:#x}, {} bytes",
            f.head.addr(),
            f.offset,
            f.len
        );
    }
    println!(
        "{} bytes in {} frags with {} lookups",
        built,
        frags.len(),
        builder.stats().lookups
    );

    // The frags as segments of a cursor: the bytes they describe gathered into one buffer (what
    // a device without scatter-gather would need), checked against the message. A frag is only
    // an address: the arena it points into must outlive it, as the pinned pages must in a stack.
    let pieces: Vec<&[u8]> = frags
        .iter()
        .map(|f| &arena[f.addr() - base..][..f.len])
        .collect();
    let segs: Vec<IoVec> = pieces.iter().map(|p| IoVec::new(p)).collect();
    let mut linear = vec![1u8; msg.len()];
    assert_eq!(
        copy_from_iter(&mut linear, &mut Source::iovec(&segs), Temporal),
        msg.len()
    );
    assert_eq!(linear, msg);
}
