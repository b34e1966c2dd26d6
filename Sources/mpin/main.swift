import MPinUserCommands

mpinMain()
