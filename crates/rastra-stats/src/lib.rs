//! Statistics, defined once (BRIEF "Statistics"; ATTILA's per-unit statistics per draw and per
//! frame).
//!
//! Every counter rastra keeps is declared in the single [`counters!`] table below: the Vulkan
//! pipeline-statistics set first (same names as `VkQueryPipelineStatisticFlagBits`), then the
//! hardware counters of each unit in pipeline order. Units count where the work happens; no
//! counter is ever read to make a decision.

use std::fmt::Write as _;

/// Declares the [`Counters`] struct, its name table and its arithmetic from one list.
macro_rules! counters {
    ($( $unit:literal { $( $(#[doc = $doc:literal])+ $name:ident, )+ } )+) => {
        /// One set of counters: for a draw, a frame, or one worker's share of either.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct Counters {
            $( $( $(#[doc = $doc])+ pub $name: u64, )+ )+
        }

        impl Counters {
            /// Every counter as `(unit, name, description)`, in table order.
            pub const TABLE: &'static [(&'static str, &'static str, &'static str)] = &[
                $( $( ($unit, stringify!($name), concat!($($doc),+)), )+ )+
            ];

            /// Counter values in [`Counters::TABLE`] order.
            pub fn values(&self) -> Vec<u64> {
                vec![$( $( self.$name, )+ )+]
            }

            /// Adds every counter of `other` into `self`.
            pub fn accumulate(&mut self, other: &Counters) {
                $( $( self.$name += other.$name; )+ )+
            }

            /// Value of the counter called `name`, if there is one.
            pub fn get(&self, name: &str) -> Option<u64> {
                match name {
                    $( $( stringify!($name) => Some(self.$name), )+ )+
                    _ => None,
                }
            }
        }
    };
}

counters! {
    "pipeline statistics (Vulkan)" {
        /// Vertices the input assembler read (per primitive reference; a strip vertex shared by
        /// two triangles counts once per index read).
        input_assembly_vertices,
        /// Primitives the input assembler produced.
        input_assembly_primitives,
        /// Vertex shader invocations (one per unique vertex per batch).
        vertex_shader_invocations,
        /// Primitives that entered the clip stage.
        clipping_invocations,
        /// Primitives that left the clip stage (after trivial reject, clipping may add some).
        clipping_primitives,
        /// Fragment shader invocations, helper lanes not included.
        fragment_shader_invocations,
        /// Compute shader invocations.
        compute_shader_invocations,
    }
    "input assembler" {
        /// Index or vertex-attribute reads outside their buffer, which returned zero.
        out_of_bounds_fetches,
    }
    "vertex shading" {
        /// Vertex batches formed (each at most 32 unique vertices, never splitting a primitive).
        vertex_batches,
        /// Index references served by a vertex already in the batch.
        vertex_cache_hits,
        /// Vertex warps issued to the shader cores.
        vertex_warps,
        /// IR instructions the vertex warps issued.
        vertex_instructions,
    }
    "clip and cull" {
        /// Primitives dropped because all vertices were outside one frustum plane, or because
        /// a vertex position was not finite.
        culled_frustum,
        /// Primitives that crossed near/far/w or the guard band and were clipped geometrically.
        primitives_clipped,
        /// Primitives culled as back-facing.
        culled_backface,
        /// Primitives with zero area after sub-pixel snapping.
        culled_zero_area,
        /// Primitives whose bounding box missed the viewport and scissor after snapping.
        culled_scissor,
        /// Triangles whose snapped bounding box holds no sample position, so they could
        /// cover none (small-primitive culling).
        culled_no_sample,
    }
    "setup and raster" {
        /// Triangles set up for rasterization.
        triangles_setup,
        /// Screen-tile bin entries written by binning.
        tile_bin_entries,
        /// Tiles the back end rasterized (tiles whose bin was not empty).
        tiles_rasterized,
        /// Coarse blocks tested against the edge functions (blocks a run of rejected ones
        /// steps over are not tested).
        coarse_blocks_tested,
        /// Coarse blocks found fully inside all three edges.
        coarse_blocks_full,
        /// Quads emitted with at least one covered sample.
        quads_rasterized,
    }
    "depth" {
        /// Coarse blocks of triangles that hierarchical Z rejected before fine rasterization.
        hiz_blocks_rejected,
        /// Samples rejected by the early depth test, before shading.
        early_z_killed,
        /// Samples rejected by the late depth test, after shading.
        late_z_killed,
        /// Quads that passed early Z but were never shaded: later opaque quads of the same
        /// tile passed the depth test on every pixel they passed (hidden-surface removal).
        hidden_quads_removed,
        /// Pixels that passed early Z but were neither shaded nor written because later
        /// opaque quads of the same tile overwrote every sample they passed (lanes of quads
        /// still shaded for their other pixels ran as helpers).
        hidden_pixels_removed,
    }
    "pixel shading" {
        /// Pixel warps issued to the shader cores.
        pixel_warps,
        /// Lanes shaded only so that their quad has derivatives (no covered sample).
        helper_lanes,
        /// Fragments (lanes with coverage, helpers not included) that executed `discard`.
        fragments_discarded,
        /// IR instructions the pixel warps issued.
        pixel_instructions,
    }
    "output merger" {
        /// Colour samples written to render targets (per target; a target whose write mask
        /// is empty writes none).
        samples_written,
        /// Colour samples that went through the blender.
        samples_blended,
        /// Depth samples written.
        depth_samples_written,
        /// Multisampled pixels resolved into single-sample targets.
        pixels_resolved,
        /// 64×64 screen tiles whose render-pass clear the ROPs wrote (fast clear): just
        /// before the tile's first triangle, or at the pass end for tiles none touched.
        fast_clear_tiles,
    }
    "compute" {
        /// Workgroups dispatched.
        workgroups_dispatched,
        /// Compute warps run (a workgroup is one or more warps).
        compute_warps,
    }
    "shader cores" {
        /// Warp instructions issued, all stages: arithmetic and logic.
        instructions_alu,
        /// Warp instructions issued: transcendental (exp, log, sin, sqrt, …).
        instructions_transcendental,
        /// Warp instructions issued: buffer and workgroup memory accesses and atomics.
        instructions_memory,
        /// Warp instructions issued: texture sampling and loads.
        instructions_texture,
        /// Warp instructions issued: control flow.
        instructions_control,
        /// Lane slots issued: instructions × warp width.
        issued_lane_slots,
        /// Sum over issued instructions of their active lanes (lane utilisation is this over
        /// `issued_lane_slots`).
        active_lane_slots,
        /// Branches whose condition split a warp's active lanes.
        divergent_branches,
        /// Times a warp waited at a barrier for the rest of its workgroup.
        barrier_waits,
    }
    "texture units" {
        /// Filter footprints looked up in the texel cache (one per point, bilinear or
        /// trilinear-in-3D tap; an anisotropic trilinear sample is several).
        texel_requests,
        /// Texels those footprints read.
        texels_read,
        /// L1 (decoded texel) line lookups.
        texel_l1_accesses,
        /// L1 line lookups that missed.
        texel_l1_misses,
        /// Texels brought into L1 by its fills (misses × line texels).
        texel_l1_texels_filled,
        /// Compressed blocks decoded while filling L1 lines.
        texel_blocks_decoded,
        /// L2 (raw texture memory) line lookups by L1 fills.
        texel_l2_accesses,
        /// L2 lookups that missed and went to memory.
        texel_l2_misses,
        /// Bytes the L2 read from texture memory.
        texture_bytes_from_memory,
    }
}

/// Statistics of one draw, labelled for reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// What the draw was (e.g. "pass 0 draw 3: draw_indexed 36 × 1").
    pub label: String,
    pub counters: Counters,
}

/// Statistics of a frame (everything submitted between two reports): per draw and in total.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    pub draws: Vec<DrawStats>,
}

impl FrameStats {
    /// Sum over all draws.
    pub fn total(&self) -> Counters {
        let mut total = Counters::default();
        for draw in &self.draws {
            total.accumulate(&draw.counters);
        }
        total
    }

    /// Human-readable table: one row per counter, grouped by unit, frame total and the
    /// per-draw values when there are several draws (up to eight columns).
    pub fn table(&self) -> String {
        let total = self.total();
        let shown: Vec<&DrawStats> = if self.draws.len() > 1 {
            self.draws.iter().take(8).collect()
        } else {
            Vec::new()
        };
        let mut out = String::new();
        let _ = write!(out, "{:<30} {:>14}", "counter", "frame");
        for (i, _) in shown.iter().enumerate() {
            let _ = write!(out, " {:>12}", format!("draw {i}"));
        }
        out.push('\n');
        let mut unit = "";
        let totals = total.values();
        let per_draw: Vec<Vec<u64>> = shown.iter().map(|d| d.counters.values()).collect();
        for (i, (u, name, _)) in Counters::TABLE.iter().enumerate() {
            if *u != unit {
                unit = u;
                let _ = writeln!(out, "[{unit}]");
            }
            let _ = write!(out, "  {:<28} {:>14}", name, totals[i]);
            for values in &per_draw {
                let _ = write!(out, " {:>12}", values[i]);
            }
            out.push('\n');
        }
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                "n/a".to_string()
            } else {
                format!("{:.1}%", 100.0 * a as f64 / b as f64)
            }
        };
        let references = total.vertex_cache_hits + total.vertex_shader_invocations;
        let _ = writeln!(out, "[derived]");
        for (name, value) in [
            (
                "vertex cache hit rate",
                ratio(total.vertex_cache_hits, references),
            ),
            (
                "lane utilisation",
                ratio(total.active_lane_slots, total.issued_lane_slots),
            ),
            (
                "helper lanes of pixel lanes",
                ratio(
                    total.helper_lanes,
                    total.helper_lanes + total.fragment_shader_invocations,
                ),
            ),
            (
                "texel cache L1 hit rate",
                ratio(
                    total.texel_l1_accesses - total.texel_l1_misses.min(total.texel_l1_accesses),
                    total.texel_l1_accesses,
                ),
            ),
            (
                "texels filled per request",
                if total.texel_requests == 0 {
                    "n/a".to_string()
                } else {
                    format!(
                        "{:.3}",
                        total.texel_l1_texels_filled as f64 / total.texel_requests as f64
                    )
                },
            ),
            (
                "early-Z rejects of tested samples",
                ratio(
                    total.early_z_killed,
                    total.early_z_killed + total.depth_samples_written,
                ),
            ),
        ] {
            let _ = writeln!(out, "  {name:<34} {value:>8}");
        }
        if self.draws.len() > shown.len() && !shown.is_empty() {
            let _ = writeln!(
                out,
                "({} draws; first {} shown)",
                self.draws.len(),
                shown.len()
            );
        }
        out
    }

    /// JSON: `{"frame": {counter: value, ...}, "draws": [{"label": ..., counter: value, ...}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        fn object(counters: &Counters) -> serde_json::Map<String, serde_json::Value> {
            Counters::TABLE
                .iter()
                .zip(counters.values())
                .map(|((_, name, _), v)| (name.to_string(), serde_json::Value::from(v)))
                .collect()
        }
        let draws = self
            .draws
            .iter()
            .map(|d| {
                let mut map = serde_json::Map::new();
                map.insert("label".into(), d.label.clone().into());
                map.extend(object(&d.counters));
                serde_json::Value::Object(map)
            })
            .collect();
        serde_json::json!({ "frame": object(&self.total()), "draws": serde_json::Value::Array(draws) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_every_counter_once() {
        let names: std::collections::HashSet<_> = Counters::TABLE.iter().map(|t| t.1).collect();
        assert_eq!(names.len(), Counters::TABLE.len());
        assert_eq!(Counters::default().values().len(), Counters::TABLE.len());
    }

    #[test]
    fn frame_total_sums_draws() {
        let a = Counters {
            vertex_cache_hits: 3,
            ..Counters::default()
        };
        let b = Counters {
            vertex_cache_hits: 4,
            quads_rasterized: 1,
            ..Counters::default()
        };
        let frame = FrameStats {
            draws: vec![
                DrawStats {
                    label: "a".into(),
                    counters: a,
                },
                DrawStats {
                    label: "b".into(),
                    counters: b,
                },
            ],
        };
        assert_eq!(frame.total().vertex_cache_hits, 7);
        assert_eq!(frame.total().get("quads_rasterized"), Some(1));
        let json = frame.to_json();
        assert_eq!(json["frame"]["vertex_cache_hits"], 7);
        assert_eq!(json["draws"][1]["label"], "b");
        assert!(frame.table().contains("vertex_cache_hits"));
    }
}
