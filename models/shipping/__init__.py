"""Builds on a lent GPU machine with nothing but small files coming back: carrying large files in parts,
the MPNet reader's pipeline (`gpu_ship`), the CPU reader's (`cpu_reader_ship`: teacher, distilled
students, int8 storage) and the logits every GPU computes after training (`ship_predict`)."""
