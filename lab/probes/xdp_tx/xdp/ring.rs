//! The AF_XDP rings: single-producer, single-consumer arrays of descriptors with a free-running
//! `u32` producer and consumer index each (`include/uapi/linux/if_xdp.h`, `net/xdp/xsk_queue.h`).
//!
//! A producer writes descriptors, then publishes them with a release store of its index; the
//! consumer reads that index with an acquire load, reads the descriptors, then gives the slots
//! back with a release store of its own index. Indices wrap at 2^32 and slots are `index & mask`.
//!
//! [`Producer`] and [`Consumer`] run on the kernel's mmapped rings ([`super::sys`]) or on a
//! [`heap_ring`], so the ring and back-pressure logic is tested without a kernel (`lab/probes/tests/xdp.rs`
//! plays the kernel's side).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// One TX descriptor: a frame at `addr` (offset into the UMEM) of `len` bytes (`struct xdp_desc`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Desc {
    pub addr: u64,
    pub len: u32,
    pub options: u32,
}

const _: () = assert!(std::mem::size_of::<Desc>() == std::mem::size_of::<libc::xdp_desc>());

/// Where a ring lives: the pointers into it and whatever keeps that memory mapped. Either end
/// of the ring is made from one ([`Producer::new`], [`Consumer::new`]).
pub struct RingMem<T> {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    descs: *mut T,
    size: u32,
    _owner: Arc<dyn Send + Sync>,
}

impl<T: Copy> RingMem<T> {
    /// # Safety
    /// `producer` and `consumer` point to aligned `u32`s and `descs` to `size` slots of `T`
    /// (`size` a power of two), all inside memory kept alive by `owner`, and nothing but the
    /// ring protocol (one producer, one consumer) touches them while it lives.
    pub unsafe fn new(
        producer: *const AtomicU32,
        consumer: *const AtomicU32,
        descs: *mut T,
        size: u32,
        owner: Arc<dyn Send + Sync>,
    ) -> Self {
        assert!(
            size.is_power_of_two(),
            "ring size {size} is not a power of two"
        );
        RingMem {
            producer,
            consumer,
            descs,
            size,
            _owner: owner,
        }
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: valid and aligned for the ring's life (constructor contract).
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as above.
        unsafe { &*self.consumer }
    }

    fn slot(&self, idx: u32) -> *mut T {
        // SAFETY: `idx & (size - 1) < size`, inside the slot array (constructor contract).
        unsafe { self.descs.add((idx & (self.size - 1)) as usize) }
    }
}

/// The producing end: user space for TX and fill, the kernel for completion.
pub struct Producer<T> {
    raw: RingMem<T>,
    /// Next index to hand out (published plus reserved).
    prod: u32,
    /// Last index stored to the shared producer word.
    published: u32,
    /// Cached consumer index (refreshed only when the ring looks full).
    cons: u32,
}

impl<T: Copy> Producer<T> {
    /// # Safety
    /// This is the only producer of the ring.
    pub unsafe fn new(raw: RingMem<T>) -> Self {
        let prod = raw.producer().load(Ordering::Relaxed);
        let cons = raw.consumer().load(Ordering::Acquire);
        Producer {
            raw,
            prod,
            published: prod,
            cons,
        }
    }

    pub fn size(&self) -> u32 {
        self.raw.size
    }

    /// Free slots. Reads the consumer's index only when the cached one shows fewer than `want`
    /// (as libxdp's `xsk_prod_nb_free`), so a producer with room never touches the shared line.
    pub fn free(&mut self, want: u32) -> u32 {
        let free = self.raw.size - self.prod.wrapping_sub(self.cons);
        if free >= want {
            return free;
        }
        self.cons = self.raw.consumer().load(Ordering::Acquire);
        self.raw.size - self.prod.wrapping_sub(self.cons)
    }

    /// Reserves `n` slots and returns the index of the first, or `None` when fewer than `n` are
    /// free (the ring is full: back-pressure). Reserved slots are written with [`Self::write`]
    /// and published with [`Self::submit`].
    pub fn reserve(&mut self, n: u32) -> Option<u32> {
        if self.free(n) < n {
            return None;
        }
        let first = self.prod;
        self.prod = self.prod.wrapping_add(n);
        Some(first)
    }

    /// Writes a reserved, not yet published slot.
    ///
    /// # Panics
    /// When `idx` is not reserved.
    pub fn write(&mut self, idx: u32, value: T) {
        let reserved = self.prod.wrapping_sub(self.published);
        assert!(
            idx.wrapping_sub(self.published) < reserved,
            "ring slot {idx} is not reserved (reserved {}..{})",
            self.published,
            self.prod
        );
        // SAFETY: the slot is reserved and unpublished, so the consumer does not read it (it
        // reads only below the published index) and we are its only writer.
        unsafe { self.raw.slot(idx).write_volatile(value) }
    }

    /// Publishes every reserved slot: a release store, so the descriptors (and the frames they
    /// point to, written before) are visible to the consumer that acquires the index.
    pub fn submit(&mut self) {
        self.raw.producer().store(self.prod, Ordering::Release);
        self.published = self.prod;
    }

    /// Published entries the consumer has not taken yet.
    pub fn pending(&mut self) -> u32 {
        self.cons = self.raw.consumer().load(Ordering::Acquire);
        self.published.wrapping_sub(self.cons)
    }
}

/// The consuming end: the kernel for TX and fill, user space for completion.
pub struct Consumer<T> {
    raw: RingMem<T>,
    cons: u32,
    /// Cached producer index.
    prod: u32,
}

impl<T: Copy> Consumer<T> {
    /// # Safety
    /// This is the only consumer of the ring.
    pub unsafe fn new(raw: RingMem<T>) -> Self {
        let cons = raw.consumer().load(Ordering::Relaxed);
        let prod = raw.producer().load(Ordering::Acquire);
        Consumer { raw, cons, prod }
    }

    /// Up to `max` available entries: `(first index, count)`.
    ///
    /// # Panics
    /// When the producer claims more entries than the ring holds (a corrupt ring).
    pub fn peek(&mut self, max: u32) -> (u32, u32) {
        self.prod = self.raw.producer().load(Ordering::Acquire);
        let avail = self.prod.wrapping_sub(self.cons);
        assert!(
            avail <= self.raw.size,
            "corrupt ring: producer {} is {avail} entries past consumer {} (size {})",
            self.prod,
            self.cons,
            self.raw.size
        );
        (self.cons, avail.min(max))
    }

    /// Reads an entry returned by [`Self::peek`] and not released yet.
    ///
    /// # Panics
    /// When `idx` is not available.
    pub fn read(&self, idx: u32) -> T {
        assert!(
            idx.wrapping_sub(self.cons) < self.prod.wrapping_sub(self.cons),
            "ring entry {idx} is not available ({}..{})",
            self.cons,
            self.prod
        );
        // SAFETY: published by the producer (acquired in `peek`) and not yet released, so the
        // producer does not write it.
        unsafe { self.raw.slot(idx).read_volatile() }
    }

    /// Gives `n` entries back to the producer (release store of the consumer index).
    ///
    /// # Panics
    /// When fewer than `n` entries were available.
    pub fn release(&mut self, n: u32) {
        assert!(
            n <= self.prod.wrapping_sub(self.cons),
            "releasing {n} entries not peeked"
        );
        self.cons = self.cons.wrapping_add(n);
        self.raw.consumer().store(self.cons, Ordering::Release);
    }
}

/// Ring memory on the heap, laid out like the kernel's (two index words and the slots).
struct HeapRing<T> {
    producer: AtomicU32,
    consumer: AtomicU32,
    slots: Box<[UnsafeCell<T>]>,
}

// SAFETY: the slots are only accessed through `Producer`/`Consumer`, whose protocol (release
// publish, acquire read) orders every slot access between the two threads that may hold them.
unsafe impl<T: Send> Send for HeapRing<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for HeapRing<T> {}

/// Both ends of a ring of `size` entries (a power of two) on the heap, indices starting at
/// `start` (to test wrap-around).
pub fn heap_ring<T: Copy + Default + Send + 'static>(
    size: u32,
    start: u32,
) -> (Producer<T>, Consumer<T>) {
    let ring = Arc::new(HeapRing {
        producer: AtomicU32::new(start),
        consumer: AtomicU32::new(start),
        slots: (0..size).map(|_| UnsafeCell::new(T::default())).collect(),
    });
    let descs = UnsafeCell::raw_get(ring.slots.as_ptr());
    let owner: Arc<dyn Send + Sync> = ring.clone();
    // SAFETY: the index words and `size` slots live in `ring`, kept alive by both ends; one
    // producer and one consumer are made.
    unsafe {
        let mem = || RingMem::new(&ring.producer, &ring.consumer, descs, size, owner.clone());
        (Producer::new(mem()), Consumer::new(mem()))
    }
}
