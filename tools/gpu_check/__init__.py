"""tensoracle's GPU check: one command that runs the GPU tests and benchmarks and reports them."""
