//! A `metrics` recorder for tests: keeps every counter, gauge and histogram by name and
//! labels, so a test reads back exactly what mrtr recorded. Install it for one closure with
//! `metrics::with_local_recorder` (tests run in parallel, each with its own).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};

#[derive(Clone, Debug, PartialEq)]
enum Value {
    Counter(u64),
    Gauge(f64),
    Histogram(Vec<f64>),
}

type Store = Arc<Mutex<BTreeMap<String, Value>>>;

/// The test recorder.
#[derive(Clone, Default)]
pub struct TestRecorder {
    store: Store,
}

/// `name{a="x",b="y"}` with the labels sorted.
fn render(name: &str, labels: &[(&str, &str)]) -> String {
    let mut labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    labels.sort();
    format!("{name}{{{}}}", labels.join(","))
}

fn key_of(key: &Key) -> String {
    let labels: Vec<(&str, &str)> = key.labels().map(|l| (l.key(), l.value())).collect();
    render(key.name(), &labels)
}

struct Cell {
    name: String,
    store: Store,
}

impl Cell {
    fn with(&self, f: impl FnOnce(&mut Value)) {
        let mut store = self.store.lock().unwrap();
        f(store.get_mut(&self.name).expect("registered"));
    }
}

impl CounterFn for Cell {
    fn increment(&self, n: u64) {
        self.with(|v| {
            if let Value::Counter(c) = v {
                *c += n;
            }
        });
    }
    fn absolute(&self, n: u64) {
        self.with(|v| *v = Value::Counter(n));
    }
}

impl GaugeFn for Cell {
    fn increment(&self, n: f64) {
        self.with(|v| {
            if let Value::Gauge(g) = v {
                *g += n;
            }
        });
    }
    fn decrement(&self, n: f64) {
        self.with(|v| {
            if let Value::Gauge(g) = v {
                *g -= n;
            }
        });
    }
    fn set(&self, n: f64) {
        self.with(|v| *v = Value::Gauge(n));
    }
}

impl HistogramFn for Cell {
    fn record(&self, x: f64) {
        self.with(|v| {
            if let Value::Histogram(h) = v {
                h.push(x);
            }
        });
    }
}

impl TestRecorder {
    fn cell(&self, key: &Key, initial: Value) -> Arc<Cell> {
        let name = key_of(key);
        self.store
            .lock()
            .unwrap()
            .entry(name.clone())
            .or_insert(initial);
        Arc::new(Cell {
            name,
            store: self.store.clone(),
        })
    }

    /// A counter's value (0 if never recorded).
    pub fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        match self.store.lock().unwrap().get(&render(name, labels)) {
            Some(Value::Counter(c)) => *c,
            None => 0,
            Some(other) => panic!("{name} is not a counter: {other:?}"),
        }
    }

    /// The sum of a counter over every label set.
    pub fn counter_sum(&self, name: &str) -> u64 {
        let prefix = format!("{name}{{");
        self.store
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(_, v)| match v {
                Value::Counter(c) => *c,
                _ => 0,
            })
            .sum()
    }

    /// A gauge's value, if it was ever recorded.
    pub fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        match self.store.lock().unwrap().get(&render(name, labels)) {
            Some(Value::Gauge(g)) => Some(*g),
            None => None,
            Some(other) => panic!("{name} is not a gauge: {other:?}"),
        }
    }

    /// A histogram's samples (empty if never recorded).
    pub fn histogram(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        match self.store.lock().unwrap().get(&render(name, labels)) {
            Some(Value::Histogram(h)) => h.clone(),
            None => Vec::new(),
            Some(other) => panic!("{name} is not a histogram: {other:?}"),
        }
    }

    /// Every series, for failure messages.
    pub fn dump(&self) -> String {
        format!("{:#?}", self.store.lock().unwrap())
    }
}

impl Recorder for TestRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.cell(key, Value::Counter(0)))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key, Value::Gauge(0.0)))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.cell(key, Value::Histogram(Vec::new())))
    }
}
