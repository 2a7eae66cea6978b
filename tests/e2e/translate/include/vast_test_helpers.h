/* Included through -I by the e2e corpus: a macro and a helper touching global memory. */
#define SCALE 3.0f
float scaled_load(__global const float *p, int i) { return p[i] * SCALE; }
