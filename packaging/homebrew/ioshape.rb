# Homebrew formula for ioshape, ready for a tap (brew tap ioshape/tap; the
# file goes in the tap's Formula/ directory). Each release replaces version
# and the four sha256 values with those of its checksums.txt
# (scripts/update-formula.sh does it).
class Ioshape < Formula
  desc "Record what a storage workload really does, and which benchmark predicts it"
  homepage "https://github.com/ioshape/ioshape"
  version "0.2.0"

  on_macos do
    on_arm do
      url "https://github.com/ioshape/ioshape/releases/download/v#{version}/ioshape_#{version}_darwin_arm64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000001"
    end
    on_intel do
      url "https://github.com/ioshape/ioshape/releases/download/v#{version}/ioshape_#{version}_darwin_amd64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000002"
    end
  end

  on_linux do
    on_arm do
      url "https://github.com/ioshape/ioshape/releases/download/v#{version}/ioshape_#{version}_linux_arm64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000003"
    end
    on_intel do
      url "https://github.com/ioshape/ioshape/releases/download/v#{version}/ioshape_#{version}_linux_amd64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000004"
    end
  end

  def install
    bin.install "ioshape"
    man1.install Dir["man/man1/*.1"]
    bash_completion.install "completions/ioshape.bash" => "ioshape"
    zsh_completion.install "completions/_ioshape"
    fish_completion.install "completions/ioshape.fish"
    pkgshare.install "dscripts"
    (pkgshare/"launchd").install Dir["packaging/launchd/*"]
    (pkgshare/"systemd").install Dir["packaging/systemd/*"]
  end

  def caveats
    <<~EOS
      Recording needs root: sudo ioshape record -- cp big.mov /Volumes/X
      On a Mac with System Integrity Protection on, ioshape records with fs_usage.
      To run the daemon at boot for your user, see #{opt_pkgshare}/launchd.
    EOS
  end

  test do
    assert_match "ioshape #{version}", shell_output("#{bin}/ioshape --version")
    assert_match "TIME(s)", shell_output("#{bin}/ioshape import --help")
  end
end
