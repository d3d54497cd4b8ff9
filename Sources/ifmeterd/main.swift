import IfmeterCore
Output.standardError("ifmeterd: not built yet\n")
