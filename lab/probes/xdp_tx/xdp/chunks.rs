//! UMEM chunk ownership: a chunk is free, being built by us, or in flight (owned by the kernel
//! from the TX descriptor until its address comes back on the completion ring). Only free
//! chunks are handed out, and only a completion makes an in-flight chunk free again, so no frame
//! the kernel may still read is ever overwritten.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkState {
    Free,
    /// Handed out by [`ChunkPool::alloc`], not yet on the TX ring.
    Building,
    /// On the TX ring or in the kernel, waiting for its completion.
    InFlight,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChunkError {
    /// An address that is not the start of a chunk of this UMEM.
    NotAChunk { addr: u64 },
    /// A state change the chunk's current state does not allow (e.g. a completion for a chunk
    /// that is not in flight, or a second completion).
    BadTransition {
        addr: u64,
        state: ChunkState,
        to: ChunkState,
    },
}

impl fmt::Display for ChunkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkError::NotAChunk { addr } => {
                write!(f, "address {addr:#x} is not the start of a UMEM chunk")
            }
            ChunkError::BadTransition { addr, state, to } => {
                write!(f, "chunk {addr:#x} is {state:?}, cannot become {to:?}")
            }
        }
    }
}

impl std::error::Error for ChunkError {}

/// The chunks of one UMEM (aligned mode: chunk `i` starts at `i * chunk_size`).
pub struct ChunkPool {
    chunk_size: u32,
    /// Free chunks, most recently completed last (LIFO: its lines are the likeliest cached).
    free: Vec<u64>,
    state: Vec<ChunkState>,
}

impl ChunkPool {
    pub fn new(chunks: u32, chunk_size: u32) -> Self {
        assert!(chunks > 0 && chunk_size > 0);
        ChunkPool {
            chunk_size,
            free: (0..chunks as u64)
                .rev()
                .map(|i| i * chunk_size as u64)
                .collect(),
            state: vec![ChunkState::Free; chunks as usize],
        }
    }

    pub fn chunk_size(&self) -> u32 {
        self.chunk_size
    }

    pub fn chunks(&self) -> usize {
        self.state.len()
    }

    pub fn available(&self) -> usize {
        self.free.len()
    }

    pub fn in_flight(&self) -> usize {
        self.state
            .iter()
            .filter(|&&s| s == ChunkState::InFlight)
            .count()
    }

    pub fn state(&self, addr: u64) -> Result<ChunkState, ChunkError> {
        Ok(self.state[self.index(addr)?])
    }

    fn index(&self, addr: u64) -> Result<usize, ChunkError> {
        let i = addr / self.chunk_size as u64;
        if !addr.is_multiple_of(self.chunk_size as u64) || i >= self.state.len() as u64 {
            return Err(ChunkError::NotAChunk { addr });
        }
        Ok(i as usize)
    }

    fn transition(
        &mut self,
        addr: u64,
        from: ChunkState,
        to: ChunkState,
    ) -> Result<(), ChunkError> {
        let i = self.index(addr)?;
        if self.state[i] != from {
            return Err(ChunkError::BadTransition {
                addr,
                state: self.state[i],
                to,
            });
        }
        self.state[i] = to;
        Ok(())
    }

    /// A free chunk to build a frame in, or `None` when every chunk is building or in flight
    /// (completions lagging: back-pressure).
    pub fn alloc(&mut self) -> Option<u64> {
        let addr = self.free.pop()?;
        let i = (addr / self.chunk_size as u64) as usize;
        debug_assert_eq!(self.state[i], ChunkState::Free);
        self.state[i] = ChunkState::Building;
        Some(addr)
    }

    /// A chunk from [`Self::alloc`] that will not be sent after all.
    pub fn give_back(&mut self, addr: u64) -> Result<(), ChunkError> {
        self.transition(addr, ChunkState::Building, ChunkState::Free)?;
        self.free.push(addr);
        Ok(())
    }

    /// The chunk's descriptor is on the TX ring: the kernel owns it now.
    pub fn submitted(&mut self, addr: u64) -> Result<(), ChunkError> {
        self.transition(addr, ChunkState::Building, ChunkState::InFlight)
    }

    /// The kernel returned the chunk on the completion ring: it may be reused.
    pub fn complete(&mut self, addr: u64) -> Result<(), ChunkError> {
        self.transition(addr, ChunkState::InFlight, ChunkState::Free)?;
        self.free.push(addr);
        Ok(())
    }
}
