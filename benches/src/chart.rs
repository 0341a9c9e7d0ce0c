//! The size-sweep chart of `BENCHMARKS.md`, drawn as SVG by `plotters`.
//!
//! Both axes are logarithmic: continuation bytes across, median round-trip time up. mrtr's
//! rows are solid lines with markers, the fair floors dashed lines in the same colour as their
//! backend, the peers thin grey-to-brown lines.

use plotters::prelude::*;

use crate::SIZES;

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An mrtr configuration: solid, with markers.
    Mrtr,
    /// A fair floor: dashed.
    Floor,
    /// A peer library: thin.
    Peer,
}

/// One line of the chart: its label, kind, colour index and one median (ns) per size of
/// [`SIZES`] (`None` where not measured).
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// How it is drawn.
    pub kind: Kind,
    /// Index into the palette; a floor uses its backend's index.
    pub colour: usize,
    /// Medians in ns, one per size.
    pub ns: [Option<f64>; 4],
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0xbc, 0xbd, 0x22),
];

const PEER_SHADES: [RGBColor; 6] = [
    RGBColor(0x55, 0x55, 0x55),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x99, 0x99, 0x99),
    RGBColor(0x6b, 0x4e, 0x2e),
    RGBColor(0x33, 0x33, 0x33),
    RGBColor(0xb0, 0x8d, 0x6a),
];

fn colour(s: &Series) -> RGBColor {
    match s.kind {
        Kind::Peer => PEER_SHADES[s.colour % PEER_SHADES.len()],
        _ => PALETTE[s.colour % PALETTE.len()],
    }
}

/// 1, 2, 5 × each power of ten between `lo` and `hi` (µs).
fn decades(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut p = 10f64.powi(lo.log10().floor() as i32);
    while p <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = p * m;
            if (lo..=hi).contains(&v) {
                out.push(v);
            }
        }
        p *= 10.0;
    }
    out
}

fn points(s: &Series) -> Vec<(f64, f64)> {
    SIZES
        .iter()
        .zip(s.ns)
        .filter_map(|(&n, v)| v.map(|ns| (n as f64, ns / 1000.0)))
        .collect()
}

/// Draws `series` to an SVG file at `path`, titled `title`.
pub fn draw(path: &std::path::Path, title: &str, series: &[Series]) -> Result<(), String> {
    let all: Vec<f64> = series.iter().flat_map(points).map(|p| p.1).collect();
    if all.is_empty() {
        return Err("nothing measured to draw".into());
    }
    let lo = all.iter().copied().fold(f64::MAX, f64::min) * 0.8;
    let hi = all.iter().copied().fold(f64::MIN, f64::max) * 1.25;
    let root = SVGBackend::new(path, (1100, 720)).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (plot, legend) = root.split_horizontally(760);
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (SIZES[0] as f64 * 0.85..SIZES[3] as f64 * 1.15)
                .log_scale()
                .with_key_points(SIZES.iter().map(|&n| n as f64).collect()),
            (lo..hi).log_scale().with_key_points(decades(lo, hi)),
        )
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .max_light_lines(0)
        .x_desc("continuation bytes")
        .y_desc("seal + unseal, µs (median)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| {
            if *y >= 1.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.1}")
            }
        })
        .draw()
        .map_err(|e| err(&e))?;
    for s in series {
        let c = colour(s);
        let pts = points(s);
        match s.kind {
            Kind::Mrtr => {
                chart
                    .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(|e| err(&e))?;
            }
            Kind::Floor => {
                chart
                    .draw_series(DashedLineSeries::new(pts, 6, 4, c.stroke_width(2)))
                    .map_err(|e| err(&e))?;
            }
            Kind::Peer => {
                chart
                    .draw_series(LineSeries::new(pts, c.stroke_width(1)))
                    .map_err(|e| err(&e))?;
            }
        }
    }
    // The legend, in its own column: a sample of each line's style, then its label.
    let row = 22;
    for (i, s) in series.iter().enumerate() {
        let y = 40 + i as i32 * row;
        let c = colour(s);
        let (x0, x1) = (8, 44);
        match s.kind {
            Kind::Mrtr => {
                legend
                    .draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2)))
                    .map_err(|e| err(&e))?;
                legend
                    .draw(&Circle::new(((x0 + x1) / 2, y), 3, c.filled()))
                    .map_err(|e| err(&e))?;
            }
            Kind::Floor => {
                for k in 0..4 {
                    let a = x0 + k * 10;
                    legend
                        .draw(&PathElement::new(
                            vec![(a, y), (a + 6, y)],
                            c.stroke_width(2),
                        ))
                        .map_err(|e| err(&e))?;
                }
            }
            Kind::Peer => {
                legend
                    .draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(1)))
                    .map_err(|e| err(&e))?;
            }
        }
        legend
            .draw(&Text::new(
                s.label.clone(),
                (x1 + 8, y - 7),
                ("sans-serif", 13).into_font(),
            ))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
