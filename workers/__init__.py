"""RQ workers: the job task and worker start-up. No HTTP here."""
