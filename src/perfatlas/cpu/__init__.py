"""The cores: peak floating-point rate (cpu.peakflops), core-to-core latency (cpu.core_to_core), and the roofline drawn from stored results."""
