"""From weights to a shipped model directory: ONNX graphs (torch.onnx for the seed's architecture,
written node by node for MPNet), int8 forms and their checks on many cores, external-data files under
16 MiB, the card, and the two tiny test models written through the same path."""
