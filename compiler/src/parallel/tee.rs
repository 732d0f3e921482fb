//! Two trace sinks as one: a worker that both prints and records.

use chronon_runtime::{FifoEvent, Observation, Timestamp, TraceRecord, TraceSink};

/// Hands every call to both sinks; observes what either does.
pub(crate) struct Tee(pub Box<dyn TraceSink>, pub Box<dyn TraceSink>);

impl TraceSink for Tee {
    fn record(&mut self, r: &TraceRecord<'_>) {
        self.0.record(r);
        self.1.record(r);
    }

    fn observes_commits(&self) -> bool {
        self.0.observes_commits() || self.1.observes_commits()
    }

    fn observation(&self, fifos: usize) -> Observation {
        let (a, b) = (self.0.observation(fifos), self.1.observation(fifos));
        let either = |x: &[bool], y: &[bool]| {
            (0..fifos)
                .map(|f| x.get(f).copied().unwrap_or(false) || y.get(f).copied().unwrap_or(false))
                .collect()
        };
        Observation {
            traces: a.traces || b.traces,
            fifo: (0..fifos).map(|f| a.kinds(f).union(b.kinds(f))).collect(),
            commits: a.commits || b.commits,
            occupancy_watch: either(&a.occupancy_watch, &b.occupancy_watch),
        }
    }

    fn fifo(&mut self, event: &FifoEvent) {
        self.0.fifo(event);
        self.1.fifo(event);
    }

    fn commit_events(&mut self, domain: u32, time: Timestamp, events: &[FifoEvent]) {
        self.0.commit_events(domain, time, events);
        self.1.commit_events(domain, time, events);
    }

    fn fifo_occupancy(&mut self, fifo: u32, domain: u32, time: Timestamp, occupancy: u32) {
        self.0.fifo_occupancy(fifo, domain, time, occupancy);
        self.1.fifo_occupancy(fifo, domain, time, occupancy);
    }

    fn domain_committed(&mut self, domain: u32, cycle: u64, time: Timestamp) {
        self.0.domain_committed(domain, cycle, time);
        self.1.domain_committed(domain, cycle, time);
    }

    fn stop_requested(&self) -> bool {
        self.0.stop_requested() || self.1.stop_requested()
    }

    fn stop_poll_interval(&self) -> u32 {
        self.0.stop_poll_interval().min(self.1.stop_poll_interval())
    }
}
