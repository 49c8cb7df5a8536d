"""Infrastructure every layer shares: settings, errors, the graph and its store, the device and
the one CUDA loader, the algorithm registry, graph file formats (io) and the job protocol."""
