// The same program compiled by nvcc: myriad::sample then instantiates the CUDA backend for
// ShiftedNormals itself (run/sample.hpp), and the run takes the GPU when one is present
// (--device auto), the CPU otherwise.
#include "main.cpp"
