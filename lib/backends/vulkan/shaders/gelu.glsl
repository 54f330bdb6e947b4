// GELU's tanh form on f16 input and output, as ggml's GGML_GELU_FP16 table gives it.
float Gelu(float x) {
  const float h = RoundF16(x);
  return RoundF16(0.5 * h * (1.0 + tanh(0.7978845608028654 * (h + 0.044715 * h * h * h))));
}
