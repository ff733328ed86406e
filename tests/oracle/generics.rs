// SPDX-License-Identifier: GPL-2.0-only
//! generics: symbolization oracle input in Rust, built with rustc -O, once
//! with the legacy symbol mangling and once with v0. Generics, closures and
//! iterator chains give inlined frames from both this file and the standard
//! library, and names with generic arguments and closure paths.

use std::collections::HashMap;
use std::fmt::Display;

trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String;
}

struct Circle {
    r: f64,
}

struct Rect {
    w: f64,
    h: f64,
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        std::f64::consts::PI * self.r * self.r
    }
    fn name(&self) -> String {
        format!("circle({})", self.r)
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.w * self.h
    }
    fn name(&self) -> String {
        format!("rect({}x{})", self.w, self.h)
    }
}

struct Stack<T> {
    items: Vec<T>,
}

impl<T: Clone + Display> Stack<T> {
    fn new() -> Self {
        Stack { items: Vec::new() }
    }

    fn push(&mut self, v: T) {
        self.items.push(v);
    }

    fn top_n(&self, n: usize) -> Vec<String> {
        self.items.iter().rev().take(n).map(|v| v.to_string()).collect()
    }
}

#[inline(never)]
fn largest<T: PartialOrd + Copy>(xs: &[T]) -> Option<T> {
    xs.iter().copied().fold(None, |best, x| match best {
        Some(b) if b >= x => Some(b),
        _ => Some(x),
    })
}

#[inline(never)]
fn word_counts(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in text.split_whitespace().map(|w| w.trim_matches(|c: char| !c.is_alphanumeric())) {
        if !w.is_empty() {
            *counts.entry(w.to_lowercase()).or_insert(0) += 1;
        }
    }
    counts
}

#[inline(never)]
fn apply<F: Fn(u64) -> u64>(f: F, seed: u64, rounds: usize) -> u64 {
    (0..rounds).fold(seed, |acc, i| f(acc ^ i as u64))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "the quick brown fox jumps over the lazy dog".into());
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);

    let shapes: Vec<Box<dyn Shape>> = (1..6)
        .map(|i| -> Box<dyn Shape> {
            if i % 2 == 0 {
                Box::new(Circle { r: i as f64 })
            } else {
                Box::new(Rect { w: i as f64, h: 2.0 })
            }
        })
        .collect();
    let total: f64 = shapes.iter().map(|s| s.area()).sum();
    let names: Vec<String> = shapes.iter().map(|s| s.name()).collect();

    let mut ints = Stack::new();
    let mut floats = Stack::new();
    for i in 0..rounds {
        ints.push(i * 7 % 13);
        floats.push(i as f64 / 3.0);
    }
    let counts = word_counts(&text);
    let mut keys: Vec<_> = counts.iter().collect();
    keys.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));

    let k = rounds as u64;
    let mixed = apply(move |x| x.wrapping_mul(6364136223846793005).wrapping_add(k), 1, rounds);
    println!(
        "{:.2} {} {:?} {:?} {:?} {:?} {:?} {}",
        total,
        names.join(","),
        ints.top_n(3),
        floats.top_n(2),
        largest(&ints.items),
        largest(&floats.items),
        keys.first(),
        mixed
    );
}
