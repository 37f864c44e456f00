"""Child modules for worker tests: started by ``adapters.worker.Worker`` as ``python -m`` or forked by a zygote."""
