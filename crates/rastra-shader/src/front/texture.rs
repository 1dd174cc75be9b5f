//! Texture expressions: `textureSample*`, `textureGather*`, `textureLoad` and the texture
//! queries become [`TexInst`]s, the shader core's requests to its texture unit (T4);
//! `textureLoad`, `textureStore` and the queries of storage textures become [`ImageInst`]s,
//! which go straight to memory. Texture
//! and sampler globals lower to binding slots (`Value::Texture` / `Value::Sampler`) that flow
//! through inlined function arguments like any other value.

use naga::{Expression, Handle, ImageQuery, SampleLevel};

use super::types::{self, Kind, unsupported};
use super::{Lowerer, R, Scope, Value, internal};
use crate::ir::{BinOp, ImageInst, ImageOp, Inst, Reg, SampleLod, TexInst, TexOp};

impl<'m> Lowerer<'m> {
    fn texture_slot(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<u32> {
        match self.get(scope, h)? {
            Value::Texture(slot) => Ok(slot),
            Value::Opaque(what) => unsupported(what),
            _ => internal("texture operand is not a texture"),
        }
    }

    fn sampler_slot(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<u32> {
        match self.get(scope, h)? {
            Value::Sampler(slot) => Ok(slot),
            Value::Opaque(what) => unsupported(what),
            _ => internal("sampler operand is not a sampler"),
        }
    }

    /// The registers of an integer expression as i32: unsigned values above `i32::MAX` are
    /// saturated (they are out of range for every texture anyway).
    fn signed(&mut self, scope: &Scope<'m>, h: Handle<Expression>) -> R<(Reg, u32)> {
        let (first, words) = self.regs(scope, h)?;
        if types::kind(self.ty(scope, h))? != Kind::U {
            return Ok((first, words));
        }
        let max = self.konst(i32::MAX as u32)?;
        let mut comps = Vec::with_capacity(words as usize);
        for k in 0..words {
            comps.push(self.bin(BinOp::UMin, first.offset(k), max)?);
        }
        Ok((self.copy(&comps)?, words))
    }

    fn tex(&mut self, texture: u32, op: TexOp, words: u32) -> R<Value> {
        let dst = self.alloc(4)?;
        self.emit(Inst::Texture(Box::new(TexInst {
            op,
            dst,
            texture,
            helper_results: true,
        })));
        Ok(Value::Regs { first: dst, words })
    }

    /// The storage-texture slot of `h`, if it is a storage texture.
    fn image_slot(&self, scope: &Scope<'m>, h: Handle<Expression>) -> R<Option<u32>> {
        Ok(match self.get(scope, h)? {
            Value::Image(slot) => Some(slot),
            _ => None,
        })
    }

    /// Lowers `textureLoad` and the size queries of a storage texture; `None` when `h` is
    /// not one of those.
    fn image_expr(&mut self, scope: &mut Scope<'m>, h: Handle<Expression>) -> R<Option<Value>> {
        let (image, op) = match scope.exprs[h] {
            Expression::ImageLoad {
                image,
                coordinate,
                array_index,
                ..
            } => {
                let Some(slot) = self.image_slot(scope, image)? else {
                    return Ok(None);
                };
                let (coords, coord_count) = self.signed(scope, coordinate)?;
                let layer = match array_index {
                    Some(a) => Some(self.signed(scope, a)?.0),
                    None => None,
                };
                let dst = self.alloc(4)?;
                let op = ImageOp::Load {
                    dst,
                    coords,
                    coord_count,
                    layer,
                };
                (
                    slot,
                    (
                        op,
                        Value::Regs {
                            first: dst,
                            words: 4,
                        },
                    ),
                )
            }
            Expression::ImageQuery { image, query } => {
                let Some(slot) = self.image_slot(scope, image)? else {
                    return Ok(None);
                };
                let words = match *self.ty(scope, h) {
                    naga::TypeInner::Vector { size, .. } => size as u32,
                    _ => 1,
                };
                let dst = self.alloc(words)?;
                let op = match query {
                    ImageQuery::Size { .. } => ImageOp::Size {
                        dst,
                        components: words,
                    },
                    ImageQuery::NumLayers => ImageOp::NumLayers { dst },
                    ImageQuery::NumLevels | ImageQuery::NumSamples => {
                        return internal("level or sample query of a storage texture");
                    }
                };
                (slot, (op, Value::Regs { first: dst, words }))
            }
            _ => return Ok(None),
        };
        let (op, value) = op;
        self.emit(Inst::Image(Box::new(ImageInst { op, image })));
        Ok(Some(value))
    }

    /// Lowers `textureStore`.
    pub(super) fn image_store(
        &mut self,
        scope: &mut Scope<'m>,
        image: Handle<Expression>,
        coordinate: Handle<Expression>,
        array_index: Option<Handle<Expression>>,
        value: Handle<Expression>,
    ) -> R<()> {
        let Some(slot) = self.image_slot(scope, image)? else {
            return internal("textureStore on something other than a storage texture");
        };
        let (coords, coord_count) = self.signed(scope, coordinate)?;
        let layer = match array_index {
            Some(a) => Some(self.signed(scope, a)?.0),
            None => None,
        };
        let (value, _) = self.regs(scope, value)?;
        self.emit(Inst::Image(Box::new(ImageInst {
            op: ImageOp::Store {
                coords,
                coord_count,
                layer,
                value,
            },
            image: slot,
        })));
        Ok(())
    }

    /// Lowers a texture expression; `None` when `h` is not one.
    pub(super) fn texture_expr(
        &mut self,
        scope: &mut Scope<'m>,
        h: Handle<Expression>,
    ) -> R<Option<Value>> {
        if let Some(v) = self.image_expr(scope, h)? {
            return Ok(Some(v));
        }
        let result_words = |lw: &Self| -> R<u32> {
            match *lw.ty(scope, h) {
                naga::TypeInner::Vector { size, .. } => Ok(size as u32),
                naga::TypeInner::Scalar(_) => Ok(1),
                _ => internal("texture result of an unexpected type"),
            }
        };
        Ok(Some(match scope.exprs[h] {
            Expression::ImageSample {
                image,
                sampler,
                gather,
                coordinate,
                array_index,
                offset,
                level,
                depth_ref,
                clamp_to_edge,
            } => {
                let texture = self.texture_slot(scope, image)?;
                let sampler = self.sampler_slot(scope, sampler)?;
                let (coords, coord_count) = self.regs(scope, coordinate)?;
                let array_index = match array_index {
                    Some(a) => Some(self.signed(scope, a)?.0),
                    None => None,
                };
                let offset = match offset {
                    Some(o) => Some(self.regs(scope, o)?.0),
                    None => None,
                };
                let lod = match level {
                    SampleLevel::Auto => {
                        self.uses_derivatives = true;
                        SampleLod::Implicit
                    }
                    SampleLevel::Bias(b) => {
                        self.uses_derivatives = true;
                        SampleLod::Bias(self.reg1(scope, b)?)
                    }
                    SampleLevel::Zero => SampleLod::Zero,
                    SampleLevel::Exact(l) => {
                        // texture_depth_* levels are integers in WGSL.
                        let r = self.reg1(scope, l)?;
                        match types::kind(self.ty(scope, l))? {
                            Kind::S => SampleLod::Level(self.un(crate::ir::UnOp::I2F, r)?),
                            Kind::U => SampleLod::Level(self.un(crate::ir::UnOp::U2F, r)?),
                            _ => SampleLod::Level(r),
                        }
                    }
                    SampleLevel::Gradient { x, y } => SampleLod::Grad {
                        ddx: self.reg1(scope, x)?,
                        ddy: self.reg1(scope, y)?,
                    },
                };
                let depth_ref = match depth_ref {
                    Some(d) => Some(self.reg1(scope, d)?),
                    None => None,
                };
                let words = result_words(self)?;
                let op = TexOp::Sample {
                    sampler,
                    coords,
                    coord_count,
                    array_index,
                    offset,
                    lod,
                    depth_ref,
                    gather: gather.map(|c| c as u32),
                    clamp_to_edge,
                };
                self.tex(texture, op, words)?
            }
            Expression::ImageLoad {
                image,
                coordinate,
                array_index,
                sample,
                level,
            } => {
                let texture = self.texture_slot(scope, image)?;
                let (coords, coord_count) = self.signed(scope, coordinate)?;
                let one = |lw: &mut Self, e: Option<Handle<Expression>>| -> R<Option<Reg>> {
                    match e {
                        Some(e) => Ok(Some(lw.signed(scope, e)?.0)),
                        None => Ok(None),
                    }
                };
                let array_index = one(self, array_index)?;
                let sample = one(self, sample)?;
                let level = one(self, level)?;
                let words = result_words(self)?;
                let op = TexOp::Load {
                    coords,
                    coord_count,
                    array_index,
                    level,
                    sample,
                };
                self.tex(texture, op, words)?
            }
            Expression::ImageQuery { image, query } => {
                let texture = self.texture_slot(scope, image)?;
                let words = result_words(self)?;
                let op = match query {
                    ImageQuery::Size { level } => TexOp::Size {
                        level: match level {
                            Some(l) => Some(self.reg1(scope, l)?),
                            None => None,
                        },
                        components: words,
                    },
                    ImageQuery::NumLevels => TexOp::NumLevels,
                    ImageQuery::NumLayers => TexOp::NumLayers,
                    ImageQuery::NumSamples => TexOp::NumSamples,
                };
                self.tex(texture, op, words)?
            }
            _ => return Ok(None),
        }))
    }
}
