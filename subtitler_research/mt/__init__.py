"""Translation measurement: erasure and the run totals of the benchmarks."""
